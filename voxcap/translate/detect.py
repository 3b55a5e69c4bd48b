"""The language of a finished caption line, from its text.

    detector = shared_detector()             # loads py3langid's model (~1 s, once a process)
    guess = detector.detect("Je pense que nous devrions partir.")
    guess.language                           # "fr"; "other"; "" when the line cannot tell
    tracker = OtherLanguageWatch()           # per stream: say once that speech is in none of 13
    if tracker.observe(guess): notice(...)

Why py3langid: its model ships in its 4.6 MB wheel (numpy only) and classifies a line in about
0.1 ms; Lingua's wheel is 96 MB and held 1.2 GB of memory with all its languages loaded. It
knows 97 languages, so a line in none of the model's 13 can be told apart from a short one.

Rules (short lines are unreliable: "Okay." scores as Tagalog):
- A line with fewer than ``MIN_LETTERS`` letters (a CJK character counts as 3) has no language
  of its own: it takes the stream's last confident one, or "" if none yet.
- The 97-language guess counts only at ``MIN_CONFIDENCE`` or more; then a language outside the
  13 is "other". Below it, the guess among the 13 alone is used (the speech model transcribes
  only those, so a doubtful line is far likelier one of them).
- The notice "in none of the 13" waits for ``OTHER_LINES`` confident "other" lines in a row
  (one stray name or quote in a foreign language raises nothing), and is said once per stream
  until a line in one of the 13 comes back.
"""

from __future__ import annotations

import copy
import logging
import threading
import unicodedata
from dataclasses import dataclass

from .languages import OTHER, SPEECH_LANGUAGES

log = logging.getLogger(__name__)

MIN_LETTERS = 12
MIN_CONFIDENCE = 0.9
OTHER_LINES = 2


@dataclass(frozen=True)
class LanguageGuess:
    language: str  # one of SPEECH_LANGUAGES, OTHER, or "" (cannot tell)
    confidence: float  # 0..1; 0 when the line was too short to judge
    detected: str = ""  # the 97-language guess behind an "other" ("pl"), for the notice


def letter_weight(text: str) -> int:
    """Letters in ``text``; a CJK or Hangul character carries a word's worth (3)."""
    n = 0
    for ch in text:
        if not ch.isalpha():
            continue
        name = unicodedata.name(ch, "")
        n += 3 if name.startswith(("CJK", "HIRAGANA", "KATAKANA", "HANGUL")) else 1
    return n


class LanguageDetector:
    """Thread-safe (one lock around the classifier, whose language restriction is state)."""

    def __init__(self) -> None:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier

        self._wide = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        self._narrow = copy.copy(self._wide)  # shares the model's arrays: loaded once
        self._narrow.set_languages(list(SPEECH_LANGUAGES))
        self._lock = threading.Lock()

    def detect(self, text: str, previous: str = "") -> LanguageGuess:
        """The line's language; ``previous``: the stream's last confident one, for short lines."""
        if letter_weight(text) < MIN_LETTERS:
            return LanguageGuess(previous, 0.0)
        with self._lock:
            wide, conf = self._wide.classify(text)
            if conf >= MIN_CONFIDENCE:
                if wide in SPEECH_LANGUAGES:
                    return LanguageGuess(wide, conf)
                return LanguageGuess(OTHER, conf, wide)
            narrow, narrow_conf = self._narrow.classify(text)
        return LanguageGuess(narrow, narrow_conf)


_shared: LanguageDetector | None = None
_shared_lock = threading.Lock()


def shared_detector() -> LanguageDetector:
    """One detector per process (loading the model takes a second or more of CPU: an app that
    starts several sessions, or tests that start several apps, pay it once)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = LanguageDetector()
        return _shared


class OtherLanguageWatch:
    """One stream's run of lines in none of the 13; ``observe`` is True once when to say so."""

    def __init__(self, lines: int = OTHER_LINES) -> None:
        self.lines = lines
        self._run = 0
        self._said = False

    def observe(self, guess: LanguageGuess) -> bool:
        if guess.language == OTHER:
            self._run += 1
        elif guess.language and guess.confidence:
            self._run = 0
            self._said = False
        if self._run >= self.lines and not self._said:
            self._said = True
            return True
        return False


def other_language_notice(label: str, guess: LanguageGuess) -> str:
    """The words of the notice (one line, naming the problem and what helps)."""
    heard = f" (it looks like {guess.detected!r})" if guess.detected else ""
    return (f"{label}: the speech seems to be in none of the 13 languages the model transcribes"
            f"{heard}; captions of it may be wrong. The model knows "
            f"{', '.join(SPEECH_LANGUAGES.values())}.")


class LineLanguages:
    """Per stream: each finished line's language (a short one takes the stream's last) and
    whether to say now that the speech is in none of the 13."""

    def __init__(self, detector: LanguageDetector) -> None:
        self.detector = detector
        self._last: dict[str, str] = {}
        self._watch: dict[str, OtherLanguageWatch] = {}

    def of_line(self, stream_id: str, text: str) -> tuple[LanguageGuess, bool]:
        guess = self.detector.detect(text, self._last.get(stream_id, ""))
        if guess.confidence and guess.language:
            self._last[stream_id] = guess.language
        say = self._watch.setdefault(stream_id, OtherLanguageWatch()).observe(guess)
        return guess, say

    def of_sentence(self, stream_id: str, text: str) -> LanguageGuess:
        """The language of lines of the stream seen already (``of_line``), taken together."""
        return self.detector.detect(text, self._last.get(stream_id, ""))
