"""Which caption lines a screen reader is told, and when: each line once, when it is finished.

Word-by-word changes would be hundreds of announcements a minute (a screen reader either reads
every one, falling behind, or drops them). So a line is announced when it is done: a new line
of its stream started, its stream ended, or nothing was added to it for ``IDLE_S`` (the speaker
paused mid-line); words added after that are announced as the line's rest when it is done.
The speaker comes first ("Them: …"), so a reader of two streams knows who said it.

No Qt here: the GUI feeds the assembler's updates and calls ``idle`` once a second.
"""

from __future__ import annotations

IDLE_S = 2.0


class CaptionAnnouncer:
    def __init__(self, idle_s: float = IDLE_S) -> None:
        self.idle_s = idle_s
        self._open: dict[str, tuple] = {}  # stream -> (line, told chars, last change)

    def feed(self, updates, now: float) -> list[str]:
        """The announcements the assembler's ``updates`` finish (in order)."""
        out: list[str] = []
        for u in updates:
            line = u.line
            held = self._open.get(line.stream_id)
            if held is not None and held[0].line_id != line.line_id:
                out.extend(self._tell(held[0], held[1]))
                held = None
            told = held[1] if held is not None else 0
            if line.final:
                out.extend(self._tell(line, told))
                self._open.pop(line.stream_id, None)
            else:
                self._open[line.stream_id] = (line, told, now)
        return out

    def idle(self, now: float) -> list[str]:
        """Lines nothing was added to for ``idle_s``, announced as far as they go."""
        out: list[str] = []
        for sid, (line, told, at) in list(self._open.items()):
            if now - at >= self.idle_s and len(line.text) > told:
                out.extend(self._tell(line, told))
                self._open[sid] = (line, len(line.text), at)
        return out

    def reset(self) -> None:
        self._open.clear()

    @staticmethod
    def _tell(line, told: int) -> list[str]:
        text = line.text[told:].strip()
        if not text:
            return []
        return [f"{line.label}: {text}" if line.label else text]
