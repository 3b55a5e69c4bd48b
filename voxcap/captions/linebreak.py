"""Line breaking by display width: greedy wrapping of words into lines of N columns.

Width is measured in terminal-style columns, not code points: East Asian wide and
full-width characters count 2, combining marks and zero-width format characters count 0.

- ``display_width(text) -> int``
- ``split_to_width(word, width) -> list[str]``: a word wider than a line, cut into pieces.
- ``wrap_words(words, width) -> list[str]``: greedy wrapping (a word never straddles lines
  unless it is itself wider than ``width``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from functools import lru_cache


@lru_cache(maxsize=4096)
def _char_width(ch: str) -> int:
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def display_width(text: str) -> int:
    if text.isascii():
        return len(text)
    return sum(_char_width(ch) for ch in text)


def split_to_width(word: str, width: int) -> list[str]:
    """Cut ``word`` into pieces of at most ``width`` columns (at least one character each)."""
    if width < 1:
        raise ValueError("width must be at least 1")
    pieces, cur, cur_w = [], "", 0
    for ch in word:
        w = _char_width(ch)
        if cur and cur_w + w > width and w > 0:
            pieces.append(cur)
            cur, cur_w = "", 0
        cur += ch
        cur_w += w
    if cur:
        pieces.append(cur)
    return pieces


def wrap_words(words: Iterable[str], width: int) -> list[str]:
    """Greedy wrap: lines of at most ``width`` columns, words joined by single spaces."""
    lines: list[str] = []
    cur, cur_w = "", 0
    for word in words:
        if not word:
            continue
        w = display_width(word)
        if cur and cur_w + 1 + w <= width:
            cur, cur_w = f"{cur} {word}", cur_w + 1 + w
            continue
        if cur:
            lines.append(cur)
        if w <= width:
            cur, cur_w = word, w
        else:
            *full, cur = split_to_width(word, width)
            lines.extend(full)
            cur_w = display_width(cur)
    if cur:
        lines.append(cur)
    return lines
