"""The session's one real engine lent to a SessionController: the controller drives it like
its own (streams, audio, flush), sees only its own streams' events, and its shutdown leaves
the engine running for the other tests."""

from __future__ import annotations

from voxcap.events import StreamFinished, TextDelta


class BorrowedEngine:
    def __init__(self, engine, hub, sink) -> None:
        self._engine, self._hub, self._sink = engine, hub, sink
        self._mine: set[str] = set()
        hub.subscribe(self._route)

    def __getattr__(self, name):  # stats, ready_info, is_ready, failure, push_audio, ...
        return getattr(self._engine, name)

    def _route(self, event) -> None:
        if isinstance(event, TextDelta | StreamFinished) and event.stream_id in self._mine:
            self._sink(event)

    def start(self):
        return self

    def open_stream(self, label: str = "") -> str:
        sid = self._engine.open_stream(label)
        self._mine.add(sid)
        return sid

    def shutdown(self, timeout: float = 30.0) -> None:
        for sid in list(self._mine):
            if sid in self._engine.open_stream_ids():
                self._engine.abort_stream(sid)
        self._hub.unsubscribe(self._route)


def borrowed_factory(engine, hub):
    return lambda settings, sink: BorrowedEngine(engine, hub, sink)
