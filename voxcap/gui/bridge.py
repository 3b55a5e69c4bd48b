"""Events from any thread into the GUI thread, through one Qt signal."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal


class EventBridge(QObject):
    """``post(event)`` may be called on any thread (engine, capture, controller); ``events``
    emits it on the thread this object lives in (the GUI thread), in the order posted. Only plain
    event objects cross; no Qt object ever leaves the GUI thread."""

    events = Signal(object)  # not "event": that name is QObject.event(), Qt's event handler
    _posted = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._posted.connect(self.events, Qt.ConnectionType.QueuedConnection)

    def post(self, event: object) -> None:
        self._posted.emit(event)
