"""The word list: names and terms spelled right in finished words (fuzzy matching, RapidFuzz).

    glossary = Glossary(["Kubernetes", "Dr. Okonkwo", "Nguyen Thi Minh"])
    glossary.correct(["Cooper", "Netties,"])   # -> Correction(words=2, text="Kubernetes,")
    glossary.correct(["the", "cooper"])        # -> None: the first word starts no term

``could_start(word)``: whether the word may begin a term the words after it complete (the
caller then waits for them: ``glossary_stage``).

``correct(words)`` looks at spans of ``words`` that start at the first one (up to
``glossary.window`` words, a term's words + 1: a name the model split in two) and returns the
best term a span matches, with the span's punctuation kept, or None.

When a span matches (both sides folded: case, accents and punctuation dropped, words joined):
- the same letters: the term's spelling ("kubernetes" -> "Kubernetes", "Wen Yi" -> "Wenyi");
- or, for a term of 5+ letters, a spelling close enough for the term's length. The score is
  RapidFuzz's ``fuzz.ratio`` (normalised Indel similarity: 100 * (1 - edits / letters of both),
  a changed letter being two edits). ``MIN_SCORE``: up to 5 letters 90 (one letter added or
  dropped, none changed: "Shabat"), 6-7 letters 84 (one changed in 7: "Ansibel"), 8-10
  letters 80 (two changed in 10: "Kubernetis", "Tannenbaum"), longer 78. Terms of 4 letters or
  fewer get the case fix only: one letter off, they are other English words ("Tora"/"tore");
- or it sounds the same: the consonant skeleton (``sound_key``: c/k/q, b/p, d/t, g/k, s/z, f/ph/v
  folded, vowels after the first letter dropped, doubles single) equal for a term of under 8
  letters, 88+ alike for a longer one, while the letters are still 55+ alike ("Okonquo" ->
  Okonkwo, "Cooper Netties" -> Kubernetes). A short skeleton is shared by many words: "mister"
  and Mistral are both m-s-t-r(-l), so a near one is not enough there.
All need the same first sound and a length within 0.67-1.5 times the term's. Tuned on 72
ordinary English sentences (tests/captions/data) with 32 terms, and with 500: no word changed;
26 near misses corrected (tests/captions/test_glossary.py).

``load_glossary(path)``: one term per line, UTF-8, ``#`` comments; a bad file raises ConfigError.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rapidfuzz import fuzz, process

from ..errors import ConfigError

MAX_TERM_WORDS = 4  # longer entries are refused: a span that long is a phrase, not a name
MAX_TERM_CHARS = 60
# (up to this many letters of the folded term, the least spelling similarity that corrects to it)
MIN_SCORE = ((5, 90.0), (7, 84.0), (10, 80.0), (1000, 78.0))
SOUND_MIN_SCORE = 88.0  # the sound keys' similarity, for terms of SOUND_FUZZY_LETTERS or more
SOUND_FUZZY_LETTERS = 8
SOUND_MIN_LETTERS = 55.0  # ... while the letters still are this alike
START_MIN_SCORE = 75.0  # a word this like a term's beginning waits for the next words
_EDGE = re.compile(r"^(\W*)(.*?)((?:['\u2019]s)?\W*)$", re.DOTALL)
_SOUND_RULES = (("ph", "f"), ("ck", "k"), ("qu", "kw"), ("q", "k"), ("x", "ks"), ("ce", "se"),
                ("ci", "si"), ("cy", "si"), ("c", "k"), ("z", "s"), ("b", "p"), ("d", "t"),
                ("v", "f"), ("g", "k"), ("y", "i"), ("w", "u"))


def fold(text: str) -> str:
    """Letters and digits only, case and accents dropped: what two spellings are compared on."""
    norm = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in norm if ch.isalnum())


def sound_key(folded: str) -> str:
    """A rough consonant skeleton of English spelling: what a misheard name keeps."""
    s = folded
    for a, b in _SOUND_RULES:
        s = s.replace(a, b)
    if not s:
        return s
    head, rest = s[0], re.sub(r"[aeiou]+", "", s[1:])
    return re.sub(r"(.)\1+", r"\1", head + rest)


def min_score(letters: int) -> float:
    for up_to, score in MIN_SCORE:
        if letters <= up_to:
            return score
    return MIN_SCORE[-1][1]


@dataclass(frozen=True)
class Correction:
    words: int  # how many of the given words the term replaces
    text: str  # the term, with the span's leading and trailing punctuation


@dataclass(frozen=True)
class _Term:
    text: str
    folded: str
    sound: str
    words: int


class Glossary:
    def __init__(self, terms: Iterable[str]) -> None:
        seen: dict[str, _Term] = {}
        for raw in terms:
            text = " ".join(raw.split())
            folded = fold(text)
            if folded and folded not in seen:
                seen[folded] = _Term(text, folded, sound_key(folded), len(text.split()))
        self.terms = tuple(seen.values())
        self._exact = {t.folded: t for t in self.terms}
        by_sound: dict[str, list[_Term]] = {}
        for t in self.terms:
            by_sound.setdefault(t.sound[:1], []).append(t)
        self._by_sound = {k: (tuple(v), tuple(t.folded for t in v)) for k, v in by_sound.items()}
        self.window = max((t.words for t in self.terms), default=0) + 1 if self.terms else 0

    def __bool__(self) -> bool:
        return bool(self.terms)

    def correct(self, words: Sequence[str]) -> Correction | None:
        """The best term that a span of ``words`` starting at the first one matches, or None."""
        best: tuple[float, int, _Term] | None = None
        for n in range(1, min(self.window, len(words)) + 1):
            folded = fold("".join(words[:n]))
            if not folded:
                return None
            term = self._exact.get(folded)
            score = 101.0 if term is not None else 0.0
            if term is None:
                term, score = self._closest(folded)
            if term is not None and (best is None or score > best[0]):
                best = (score, n, term)
        if best is None:
            return None
        _, n, term = best
        said = " ".join(words[:n])
        edge = _EDGE.match(said)  # always matches: every part may be empty
        lead, core, trail = edge.groups() if edge else ("", said, "")
        if trail[:1] and term.text.endswith(trail[:1]):
            trail = trail[1:]
        if core == term.text:
            return None
        return Correction(n, lead + term.text + trail)

    def could_start(self, word: str) -> bool:
        """Whether ``word`` may be the first of several words that together match a term: it is
        spelled, or sounds, like a longer term's beginning."""
        folded = fold(word)
        if len(folded) < 2:
            return False
        sound = sound_key(folded)
        for term in self._by_sound.get(sound[:1], ((), ()))[0]:  # the same first sound
            if len(term.folded) <= len(folded):
                continue
            if fuzz.ratio(folded, term.folded[:len(folded)]) >= START_MIN_SCORE \
                    or (len(sound) >= 3 and term.sound.startswith(sound)):
                return True
        return False

    def _closest(self, folded: str) -> tuple[_Term | None, float]:
        sound = sound_key(folded)
        terms, keys = self._by_sound.get(sound[:1], ((), ()))
        best: tuple[_Term | None, float] = (None, 0.0)
        # RapidFuzz scores the terms of the same first sound in C; the rules below see only those
        # whose letters are at least half alike
        for _key, letters, i in process.extract(folded, keys, scorer=fuzz.ratio, limit=None,
                                                score_cutoff=SOUND_MIN_LETTERS):
            term = terms[i]
            n = len(term.folded)
            if n < 5 or not (0.67 * n <= len(folded) <= 1.5 * n) or letters <= best[1]:
                continue
            if letters >= min_score(n) or self._sounds_alike(sound, term):
                best = (term, letters)
        return best

    @staticmethod
    def _sounds_alike(sound: str, term: _Term) -> bool:
        # a short skeleton is shared by many words ("mister", "Mistral"): only the same one counts
        if len(term.folded) < SOUND_FUZZY_LETTERS:
            return sound == term.sound and len(sound) >= 3
        return fuzz.ratio(sound, term.sound) >= SOUND_MIN_SCORE


def parse_glossary(text: str) -> list[str]:
    """Terms from a word list's text: one a line, ``#`` starts a comment, blanks skipped."""
    return [t for t in (" ".join(ln.split("#", 1)[0].split()) for ln in text.splitlines()) if t]


def check_terms(terms: Iterable[str], where: str) -> list[str]:
    out = []
    for i, term in enumerate(terms, 1):
        if len(term.split()) > MAX_TERM_WORDS or len(term) > MAX_TERM_CHARS:
            raise ConfigError(f"{where}: term {i} ({term[:40]!r}) is too long",
                              f"keep each term to {MAX_TERM_WORDS} words and {MAX_TERM_CHARS} "
                              "characters, one term per line")
        out.append(term)
    return out


def load_glossary(path: str | Path) -> list[str]:
    p = Path(path).expanduser()
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"The word list {p} is not UTF-8 text",
                          "save it as UTF-8, one name or term per line") from None
    except OSError as exc:
        raise ConfigError(f"Cannot read the word list {p}: {exc.strerror or exc}",
                          "give a UTF-8 text file with one name or term per line") from None
    return check_terms(parse_glossary(text), str(p))
