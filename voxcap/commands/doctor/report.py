"""The checks' verdicts as text for a terminal and a screen reader."""

from __future__ import annotations

import shutil

from ... import __version__
from .base import (
    FAIL,
    OK,
    SKIP,
    WARN,
    Check,
)

LABELS = {OK: "OK", WARN: "WARN", FAIL: "FAIL", SKIP: "skip"}


def render(checks: list[Check], width: int | None = None) -> str:
    """Plain text for a terminal (and a screen reader): verdicts are words, not colours."""
    import textwrap

    columns = width or shutil.get_terminal_size((100, 24)).columns
    label = max(len(c.title) for c in checks)
    indent = " " * (2 + 5 + 1 + label + 2)
    wrap = max(40, columns - 1)
    lines = [f"voxcap {__version__} doctor", ""]
    for c in checks:
        head = f"  {LABELS[c.verdict]:<5} {c.title:<{label}}  "
        lines += textwrap.wrap(c.summary, wrap, initial_indent=head, subsequent_indent=indent,
                               break_on_hyphens=False) or [head]
        if c.fix and c.verdict in (WARN, FAIL):
            lines += textwrap.wrap(f"fix: {c.fix}", wrap, initial_indent=indent,
                                   subsequent_indent=indent + "     ", break_on_hyphens=False)
    lines += ["", result_line(checks)]
    return "\n".join(lines) + "\n"


def result_line(checks: list[Check]) -> str:
    """The verdict of the whole: what blocks captions, or what they are ready for."""
    failed = [c.title for c in checks if c.verdict == FAIL]
    if failed:
        return (f"Result: {len(failed)} problem{'s' if len(failed) > 1 else ''} "
                f"block{'' if len(failed) > 1 else 's'} captioning: {', '.join(failed)}.")
    by_id = {c.id: c for c in checks}
    server_only = by_id.get("gpu") is not None and by_id["gpu"].details.get("server_only")
    warned = [c.title for c in checks if c.verdict == WARN and not (server_only and c.id == "gpu")]
    selftest = by_id.get("selftest")
    text = "Result: ready for a vLLM server" if server_only else "Result: ready for captions"
    if selftest is not None and selftest.verdict == OK:
        text += ", self-check passed"
    if server_only:
        text += (" (no NVIDIA GPU here: start `voxcap serve` on a computer with one, then choose "
                 "\"Use a vLLM server\" in the app)")
    if warned:
        text += f"; see the warnings: {', '.join(warned)}"
    return text + "."
