"""What is said when captures cannot start: all of them (captioning does not start, or a paused
session stays paused) or one half of a pair (captioning goes on with the other)."""

from __future__ import annotations

from ...events import AppProblem


def none_started(failed: list[tuple]) -> list[AppProblem]:
    """One notice per (spec, error); the source named only where there were several."""
    return [AppProblem(exc.message if len(failed) == 1 else f"{spec.label}: {exc.message}",
                       exc.fix, "capture") for spec, exc in failed]


def some_started(failed: list[tuple], left: list[str]) -> list[AppProblem]:
    """One notice per failed (spec, error), naming it, the problem, its fix and what goes on."""
    going_on = " and ".join(f'"{label}"' for label in left)
    return [AppProblem(f"{spec.label}: {exc.message.rstrip('.')}. Captioning goes on with "
                       f"{going_on} only.", exc.fix, "capture") for spec, exc in failed]
