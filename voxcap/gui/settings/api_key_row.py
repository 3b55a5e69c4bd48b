"""The vLLM server's API key in the first-run dialog and Settings: where the app's key comes
from ("key: found in …", "no key: the server will refuse …"), and a field or a file to give
one, stored owner-only as ``remote-api-key`` (where the app and ``--engine remote`` read it)."""

from __future__ import annotations

import logging

from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLineEdit, QPushButton, QVBoxLayout, QWidget

from ...engine.remote.settings import default_api_key_path, find_api_key, load_api_key, save_api_key
from ...errors import ConfigError
from ..a11y import announce, status_label
from .fields import Note

log = logging.getLogger(__name__)


class ApiKeyRow(QWidget):
    def __init__(self, server_url: str = "", parent=None) -> None:
        super().__init__(parent)
        self.server_url = server_url
        self.status = status_label(Note(self), "Server API key")
        self.field = QLineEdit(self)
        self.field.setEchoMode(QLineEdit.EchoMode.Password)
        self.field.setPlaceholderText("paste the server's key here")
        self.field.setAccessibleName("Server API key")
        self.store = QPushButton("Use t&his key", self)
        self.pick = QPushButton("Key f&ile…", self)
        self.pick.setToolTip("The key file `voxcap serve` printed, copied from the GPU computer")
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.field, 1)
        row.addWidget(self.store)
        row.addWidget(self.pick)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.status)
        lay.addLayout(row)
        self.store.clicked.connect(lambda: self.use_key(self.field.text()))
        self.field.returnPressed.connect(self.store.click)
        self.pick.clicked.connect(self._choose_file)
        self.refresh()

    def refresh(self, server_url: str | None = None) -> None:
        """Say where the key for ``server_url`` (or the last one given) comes from."""
        if server_url is not None:
            self.server_url = server_url
        try:
            _key, where = find_api_key(self.server_url)
        except ConfigError as exc:
            where = f"✗ {exc.message} Fix: {exc.fix}"
        self._say(where)

    def use_key(self, key: str) -> bool:
        """Store ``key`` as the app's key; False (and why, shown) if it cannot be."""
        key = key.strip()
        if not key or any(c in key for c in "\r\n"):
            self._say("✗ The key is empty or has a line break. Fix: paste the key alone.", True)
            return False
        try:
            path = save_api_key(default_api_key_path(), key)
        except ConfigError as exc:
            self._say(f"✗ {exc.message} Fix: {exc.fix}.", True)
            return False
        except OSError as exc:
            log.warning("the API key could not be stored", exc_info=True)
            self._say(f"✗ The key could not be stored: {exc.strerror or exc}. Fix: check that "
                      "the config folder is writable.", True)
            return False
        log.info("the server's API key was stored in %s", path)
        self.field.clear()
        self.refresh()
        announce(self.status, self.status.text())
        return True

    def use_file(self, path: str) -> bool:
        """Take the key from the file ``path`` (it must be readable by its owner only)."""
        try:
            key = load_api_key(path)
        except ConfigError as exc:
            log.warning("key file refused: %s", exc.message)
            self._say(f"✗ {exc.message} Fix: {exc.fix}", True)
            return False
        return self.use_key(key)

    def _choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "The server's API key file")
        if path:
            self.use_file(path)

    def _say(self, text: str, problem: bool = False) -> None:
        self.status.setText(text)
        self.status.setStyleSheet("color: #c62828;" if problem or text.startswith("no key")
                                  else "")
        if problem:
            announce(self.status, text, assertive=True)
