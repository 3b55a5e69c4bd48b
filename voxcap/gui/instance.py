"""One app per user (per config directory): a second ``voxcap gui`` hands its request to the
first over a local socket and exits. This is also how a desktop-wide keyboard shortcut reaches
the app where Qt cannot grab global keys: bind ``voxcap gui --toggle-click-through`` to a key in
the desktop's keyboard settings.

The socket is in a folder only this user can enter ($XDG_RUNTIME_DIR, or
``paths.private_tmp_dir``: 0700, checked), not in the shared temporary folder, where another
user could bind its name first and so keep the app from starting (a second start would hand
its request to that program and exit)."""

from __future__ import annotations

import hashlib
import logging
import os
import stat

from PySide6.QtCore import QCoreApplication, QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from .. import paths

log = logging.getLogger(__name__)
MESSAGES = ("show", "toggle-click-through", "toggle-captioning", "toggle-overlay")


def server_name() -> str | None:
    """The socket's full path: in the desktop session's private runtime folder
    ($XDG_RUNTIME_DIR, when it is this user's and 0700), else in this user's folder of the
    temporary one; None (logged with its fix) when that folder is not this user's."""
    digest = hashlib.sha1(str(paths.config_dir().resolve()).encode()).hexdigest()[:12]
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    try:
        st = os.lstat(runtime) if runtime else None
    except OSError:
        st = None
    if st is not None and stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and \
            not st.st_mode & 0o077:
        return os.path.join(runtime, f"voxcap-{digest}")
    try:
        return str(paths.private_tmp_dir() / f"gui-{digest}")
    except OSError as exc:
        log.warning("one app per user is not kept: %s", exc)
        return None


def send_to_running(message: str, timeout_ms: int = 1000) -> bool:
    """True if a running app took the message."""
    name = server_name()
    if name is None:
        return False
    sock = QLocalSocket()
    sock.connectToServer(name)
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
        if name is None:
            return False
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
