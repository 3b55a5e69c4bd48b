"""Profanity masking for what is shown and exported (never for the journal).

Off by default: nothing in the captions layer masks unless it is handed a ``Masker``.

- ``Masker(words)``: entries match whole words, case-insensitively; an entry ending in
  ``*`` matches any word starting with the rest (``"fuck*"`` masks "fucking").
  ``mask_word("Shit,") -> "S***,"`` keeps the first letter, the length and the punctuation
  around the word, so a reader still sees that something was said.
  ``mask_text(text)`` masks every word of a longer text.
- ``load_word_list(path) -> list[str]``: one entry per line, ``#`` comments, UTF-8.
- ``DEFAULT_WORDS``: a short English list, used by ``make_masker(enabled=True)``.
- ``make_masker(enabled, words_file=None) -> Masker | None``: what a setting turns into.
- ``PieceMasker(masker)``: masks text arriving in pieces (a stream's deltas, printed as they
  come): a word is masked once whole, so its unfinished end waits for the next piece or
  ``release``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from ..errors import ConfigError

DEFAULT_WORDS = (
    "fuck*", "motherfuck*", "shit*", "bullshit*", "cunt*", "bitch*", "bastard*", "asshole*",
    "dick", "dickhead*", "cock", "cocksucker*", "pussy", "wank*", "twat*", "prick", "slut*",
    "whore*", "bollocks", "arse", "arsehole*", "damn", "goddamn*", "crap", "piss*",
)
_WORD = re.compile(r"\w+(?:['\u2019-]\w+)*")
_CORE = re.compile(r"^(\W*)(.*?)(\W*)$", re.DOTALL)
_UNFINISHED = re.compile(r"\w+(?:['\u2019-]\w*)*$")  # a piece's last word, perhaps cut


class Masker:
    def __init__(self, words: Iterable[str]) -> None:
        exact, prefixes = set(), []
        for entry in words:
            entry = entry.strip().casefold()
            if not entry:
                continue
            if entry.endswith("*"):
                if entry.rstrip("*"):
                    prefixes.append(entry.rstrip("*"))
            else:
                exact.add(entry)
        self._exact = frozenset(exact)
        self._prefixes = tuple(sorted(set(prefixes)))

    def matches(self, core: str) -> bool:
        key = core.casefold()
        if key in self._exact:
            return True
        return bool(self._prefixes) and key.startswith(self._prefixes)

    def mask_word(self, word: str) -> str:
        match = _CORE.match(word)
        if match is None:  # (the pattern matches any word)
            return word
        lead, core, trail = match.groups()
        if not core or not self.matches(core):
            return word
        return f"{lead}{core[0]}{'*' * (len(core) - 1)}{trail}"

    def mask_text(self, text: str) -> str:
        return _WORD.sub(lambda m: self.mask_word(m.group(0)), text)


def load_word_list(path: str | Path) -> list[str]:
    p = Path(path).expanduser()
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"Cannot read the word list {p}: {exc}",
                          "give a UTF-8 text file with one word per line") from None
    return [ln.split("#", 1)[0].strip() for ln in lines if ln.split("#", 1)[0].strip()]


def make_masker(enabled: bool, words_file: str | Path | None = None) -> Masker | None:
    if not enabled:
        return None
    return Masker(load_word_list(words_file) if words_file else DEFAULT_WORDS)


class PieceMasker:
    """``Masker`` for text that arrives in pieces, per stream: "Oh sh" then "it" must read
    "Oh s***", so the last word of a piece is held until the piece after it shows it ended."""

    def __init__(self, masker: Masker) -> None:
        self.masker = masker
        self._held: dict[str, str] = {}

    def feed(self, key: str, text: str) -> str:
        """What of stream ``key``'s text so far can be shown now, masked."""
        text = self._held.pop(key, "") + text
        cut = _UNFINISHED.search(text)
        if cut:
            self._held[key] = cut.group(0)
            text = text[:cut.start()]
        return self.masker.mask_text(text)

    def release(self, key: str) -> str:
        """The held end of stream ``key``'s text (the stream ended), masked."""
        return self.masker.mask_text(self._held.pop(key, ""))

    def held(self) -> list[str]:
        return list(self._held)
