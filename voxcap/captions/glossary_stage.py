"""The word list applied to the engine's events, before anyone shows or keeps them.

    stage = GlossaryStage(Glossary(terms))     # an empty Glossary: events pass untouched
    for out in stage.feed(event):              # TextDelta, StreamFinished, SessionRolled ...
        publish(out)
    stage.glossary = Glossary(new_terms)       # from the next word on

A word is judged when it is finished: the next word started, the stream (or the engine) ended,
or ``hold_s`` of the stream's audio passed with no new text; so with a word list a word is shown
up to ``hold_s`` later than without. While the finished words so far may still begin a
term of several words (``Glossary.could_start``: "Cooper" of "Kubernetes", "Nguyen Tee" of
"Nguyen Thi Minh"), they wait for the next, up to the longest term's words + 1; every other word
goes on as soon as it is finished (with the 32 terms of the tests, 1 ordinary word in 13 waits
for one more). Meanwhile that stream's events wait, in order: what comes out is the same
events with the same steps, audio spans and order, only the text of the steps that held a
corrected word rewritten (the first of them gets the term, the others what is left of theirs)
and ``said`` set to the model's own text on those. So the overlay, history, feed, OBS, the
terminal and the journal (which keeps both) all see one text.

Not thread-safe: feed it from one thread (the engine's event callback).
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..events import EngineFailed, EngineStopped, SessionRolled, StreamFinished, TextDelta
from .glossary import Glossary

# audio with no new text after which the last word counts as finished: a word's pieces come in
# steps next to each other, a pause of 4 steps (0.32 s) is the end of it (the assembler, which
# may glue a late piece on, takes 1)
HOLD_S = 0.32
_WORD = re.compile(r"\S+")


class _Held:
    def __init__(self) -> None:
        self.events: list[TextDelta] = []
        self.texts: list[str] = []  # each held delta's text, as corrected so far
        self.decided = 0  # characters of the held text already judged
        self.last_text_end = 0.0


class GlossaryStage:
    def __init__(self, glossary: Glossary | None = None, hold_s: float = HOLD_S) -> None:
        self.glossary = glossary or Glossary(())
        self.hold_s = hold_s
        self._held: dict[str, _Held] = {}

    def feed(self, event) -> list:
        if isinstance(event, TextDelta):
            return self._delta(event)
        if isinstance(event, (StreamFinished, SessionRolled)):
            return [*self._flush(event.stream_id), event]
        if isinstance(event, (EngineFailed, EngineStopped)):  # its streams end without a word
            return [*(e for sid in list(self._held) for e in self._flush(sid)), event]
        return [event]

    def _delta(self, d: TextDelta) -> list:
        held = self._held.get(d.stream_id)
        if held is None:
            if not self.glossary or not d.text.strip():
                return [d]
            held = self._held[d.stream_id] = _Held()
        held.events.append(d)
        held.texts.append(d.text)
        if d.text.strip():
            held.last_text_end = d.audio_end_s
        final = d.audio_end_s - held.last_text_end >= self.hold_s
        return self._judge(d.stream_id, held, final)

    def _flush(self, stream_id: str) -> list:
        held = self._held.get(stream_id)
        return self._judge(stream_id, held, True) if held is not None else []

    def _judge(self, stream_id: str, held: _Held, final: bool) -> list:
        glossary = self.glossary
        while True:
            text = "".join(held.texts)
            spans = [m.span() for m in _WORD.finditer(text, held.decided)]
            finished = spans if final else spans[:-1]
            if not finished:
                break
            words = [text[a:b] for a, b in finished[:glossary.window or 1]]
            if not final and len(finished) < glossary.window \
                    and glossary.could_start("".join(words)):
                break  # the words to come may complete a term these begin
            fix = glossary.correct(words) if glossary else None
            if fix is None:
                held.decided = finished[0][1]
            else:
                start, end = finished[0][0], finished[fix.words - 1][1]
                self._rewrite(held, start, end, fix.text)
                held.decided = start + len(fix.text)
        return self._release(stream_id, held, final)

    @staticmethod
    def _rewrite(held: _Held, start: int, end: int, new: str) -> None:
        """The held text's ``[start, end)`` becomes ``new``: the first step it touches gets it."""
        pos = 0
        for i, piece in enumerate(held.texts):
            a, b = pos, pos + len(piece)
            pos = b
            if b <= start or a >= end:
                continue
            keep_head = piece[:max(0, start - a)]
            keep_tail = piece[max(0, end - a):] if b > end else ""
            held.texts[i] = keep_head + (new if a <= start < b else "") + keep_tail

    def _release(self, stream_id: str, held: _Held, final: bool) -> list:
        out, pos, n = [], 0, 0
        for d, text in zip(held.events, held.texts, strict=True):
            if not final and pos + len(text) > held.decided:
                break
            pos += len(text)
            n += 1
            out.append(d if text == d.text else replace(d, text=text, said=d.text))
        del held.events[:n], held.texts[:n]
        held.decided -= pos
        if not held.events:
            del self._held[stream_id]
        return out
