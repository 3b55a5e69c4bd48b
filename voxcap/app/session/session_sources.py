"""What a session captures from: the source asked for (``"both"``, a device, a file), what it
resolved to (spec, description) and which of them have ended (a file read to its end). When
captures cannot start, it says so: none started (captioning does not go on) or one half of a
pair (captioning goes on with the other, which is all the session keeps)."""

from __future__ import annotations

from collections.abc import Callable

from ...events import AppProblem


class SessionSources:
    def __init__(self, emit: Callable[[object], None]) -> None:
        self._emit = emit
        self.asked = ""  # what start_captioning was asked for
        self.resolved: list[tuple] = []  # (spec, description)
        self.ended: set[str] = set()  # labels whose source has no more audio

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(spec.label for spec, _ in self.resolved)

    def descriptions(self) -> dict[str, str]:
        return {spec.label: desc for spec, desc in self.resolved}

    def begin(self, asked: str) -> None:
        self.asked, self.resolved = asked, []
        self.ended.clear()

    def end(self, label: str) -> None:
        self.ended.add(label)

    def all_ended(self) -> bool:
        return all(label in self.ended for label in self.labels)

    def drop_failed(self, failed: list[tuple]) -> str | None:
        """Given the captures that failed (spec, error): if none started, why (each failure
        said); else None, and the session goes on with those that did (each failed half said)."""
        if failed and len(failed) == len(self.resolved):
            for spec, exc in failed:
                self._emit(AppProblem(exc.message if len(failed) == 1 else f"{spec.label}: {exc.message}",
                                      exc.fix, "capture"))
            return failed[0][1].message
        gone = {spec.label for spec, _ in failed}
        self.resolved = [(spec, desc) for spec, desc in self.resolved if spec.label not in gone]
        going_on = " and ".join(f'"{label}"' for label in self.labels)
        for spec, exc in failed:
            self._emit(AppProblem(f"{spec.label}: {exc.message.rstrip('.')}. Captioning goes on with "
                                  f"{going_on} only.", exc.fix, "capture"))
        return None
