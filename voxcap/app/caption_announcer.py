"""Which caption lines a screen reader is told, and when: each line once, when it is finished.

Word-by-word changes would be hundreds of announcements a minute (a screen reader either reads
every one, falling behind, or drops them). So a line is announced when it is done: a new line
of its stream started, its stream ended, or nothing was added to it for ``IDLE_S`` (the speaker
paused mid-line); words added after that are announced as the line's rest when it is done.
The speaker comes first ("Them: …"), so a reader of two streams knows who said it.

Translations (``translated``, with ``shown`` the user's ``translation.shown()``): "both" tells
each line as above and its translation when it comes ("Them, in English: …"); "translation"
holds a finished line until its translation comes and tells that instead, or the original when
the line is not translated or nothing came within ``TRANSLATION_WAIT_S`` (a line dropped by a
translator that could not keep up is still told; a translation that comes after all is told
then, "Them, in English: …"). Each line's own translation is told, once; the better one of
its whole sentence that comes later (``LineTranslated.refined``) is never told. A line is
matched to its translation by stream and start time (``line_translation.line_key``).

No Qt here: the GUI feeds the assembler's updates and calls ``idle`` once a second.
"""

from __future__ import annotations

from ..events import LineTranslated
from ..translate.languages import language_name
from .line_translation import line_key
from .translation_settings import BOTH, ORIGINAL, TRANSLATION

IDLE_S = 2.0
TRANSLATION_WAIT_S = 3.0  # a line's translation takes about a second; the original after this
LATE_KEPT = 64  # lines told untranslated whose translation may still come


class CaptionAnnouncer:
    def __init__(self, idle_s: float = IDLE_S, translation_wait_s: float = TRANSLATION_WAIT_S) -> None:
        self.idle_s = idle_s
        self.translation_wait_s = translation_wait_s
        self.shown = ORIGINAL
        self._open: dict[str, tuple] = {}  # stream -> (line, told chars, last change)
        self._held: dict[tuple, tuple] = {}  # line key -> (line, finished at): "translation"
        self._told_untranslated: dict[tuple, None] = {}  # line keys, oldest first
        self._labels: dict[str, str] = {}  # stream -> its speaker

    def feed(self, updates, now: float) -> list[str]:
        """The announcements the assembler's ``updates`` finish (in order)."""
        out: list[str] = []
        for u in updates:
            line = u.line
            self._labels[line.stream_id] = line.label
            held = self._open.get(line.stream_id)
            if held is not None and held[0].line_id != line.line_id:
                out.extend(self._finished(held[0], held[1], now))
                held = None
            told = held[1] if held is not None else 0
            if line.final:
                out.extend(self._finished(line, told, now))
                self._open.pop(line.stream_id, None)
            else:
                self._open[line.stream_id] = (line, told, now)
        return out

    def idle(self, now: float) -> list[str]:
        """Lines nothing was added to for ``idle_s``, announced as far as they go; lines held
        for a translation that did not come, as they were said."""
        out: list[str] = []
        if self.shown != TRANSLATION:  # a line is told once, translated, when it is finished
            for sid, (line, told, at) in list(self._open.items()):
                if now - at >= self.idle_s and len(line.text) > told:
                    out.extend(self._tell(line, told))
                    self._open[sid] = (line, len(line.text), at)
        for key, (line, at) in list(self._held.items()):
            if now - at >= self.translation_wait_s:
                del self._held[key]
                out.extend(self._tell(line, 0))
                self._told_untranslated[key] = None
                while len(self._told_untranslated) > LATE_KEPT:
                    del self._told_untranslated[next(iter(self._told_untranslated))]
        return out

    def translated(self, event: LineTranslated) -> list[str]:
        """What a line's translation (or its language alone) adds to what was told."""
        if event.refined:  # the line's own translation was told (or the line, as said)
            return []
        key = line_key(event.stream_id, event.start_s)
        late = self._told_untranslated.pop(key, 0) is None
        text = event.translation
        if (self.shown == BOTH or late) and text:
            label = self._labels.get(event.stream_id, "")
            said = f"in {language_name(event.target)}"
            return [f"{label}, {said}: {text}" if label else f"{said[:1].upper()}{said[1:]}: {text}"]
        held = self._held.pop(key, None)
        if held is None:
            return []
        if text:
            label = held[0].label
            return [f"{label}: {text}" if label else text]
        return self._tell(held[0], 0)  # not translated: as it was said

    def reset(self) -> None:
        self._open.clear()
        self._held.clear()
        self._told_untranslated.clear()

    def _finished(self, line, told: int, now: float) -> list[str]:
        if self.shown == TRANSLATION and not told:
            self._held[line_key(line.stream_id, line.start_s)] = (line, now)
            return []
        return self._tell(line, told)

    @staticmethod
    def _tell(line, told: int) -> list[str]:
        text = line.text[told:].strip()
        if not text:
            return []
        return [f"{line.label}: {text}" if line.label else text]
