"""One app per user (per config directory): a second ``voxcap gui`` hands its request to the
first over a local socket and exits. This is also how a desktop-wide keyboard shortcut reaches
the app where Qt cannot grab global keys: bind ``voxcap gui --toggle-click-through`` to a key in
the desktop's keyboard settings."""

from __future__ import annotations

import hashlib

from PySide6.QtCore import QCoreApplication, QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from .. import paths

MESSAGES = ("show", "toggle-click-through", "toggle-captioning", "toggle-overlay")


def server_name() -> str:
    digest = hashlib.sha1(str(paths.config_dir().resolve()).encode()).hexdigest()[:12]
    return f"voxcap-{digest}"


def send_to_running(message: str, timeout_ms: int = 1000) -> bool:
    """True if a running app took the message."""
    sock = QLocalSocket()
    sock.connectToServer(server_name())
    if not sock.waitForConnected(timeout_ms):
        return False
    sock.write((message + "\n").encode())
    sock.waitForBytesWritten(timeout_ms)
    sock.disconnectFromServer()
    return True


class InstanceServer(QObject):
    messageReceived = Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self.server.newConnection.connect(self._connection)

    def listen(self) -> bool:
        """Listen (replacing a stale socket a crashed run left); the socket is removed when the
        app quits, before it may leave with ``os._exit`` (application.py)."""
        name = server_name()
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.server.close)
        if self.server.listen(name):
            return True
        QLocalServer.removeServer(name)  # a stale socket of a crashed run
        return self.server.listen(name)

    def _connection(self) -> None:
        while self.server.hasPendingConnections():
            sock = self.server.nextPendingConnection()
            sock.readyRead.connect(lambda s=sock: self._read(s))

    def _read(self, sock) -> None:
        while sock.canReadLine():
            msg = bytes(sock.readLine()).decode(errors="replace").strip()
            if msg in MESSAGES:
                self.messageReceived.emit(msg)
