"""Settings → Share captions: on/off, the local network (with its token and QR code), the token on
this computer too, the port, the one site allowed to read the feed (checked as it is typed: one
exact scheme://host[:port], never ``*`` or ``null``); OBS's closed captions (its address,
password, and which text they carry while lines are translated); and, from the running server,
the address and how many are watching. It says what sharing on this computer exposes."""

from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QPixmap
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ...app.settings import ShareSettings
from ...netaddr import OBS_ADDRESS, parse_origin
from ...settings_schema import specs
from ...share import ShareStatus
from ...share.qr import qr_png
from ..a11y import status_label
from ..settings.fields import Note, choice_box, number_box, row_label

SPECS = specs(ShareSettings)
MASKED_TOKEN = re.compile(r"(?<=[?&]token=)[^&#]+")
MASK = "•" * 8
LOOPBACK_EXPOSURE = (
    "On this computer's address (127.0.0.1) the captions are readable by any program and any "
    "user logged in to this computer, the microphone's too when it is captioned; other web "
    "sites' pages cannot read them. Where others use this computer, tick the token box.")


class SharePanel(QGroupBox):
    def __init__(self, settings: ShareSettings, parent=None) -> None:
        super().__init__("Share captions (OBS, a phone, a second screen, programs)", parent)
        self.new_address_asked = False  # "New address": a new token once the settings are applied
        self.enabled = QCheckBox("Share captions &via a page and a feed at the address below", self)
        self.enabled.setChecked(settings.enabled)
        self.lan = QCheckBox("On the local network too: an access token and a &QR code", self)
        self.lan.setChecked(settings.lan)
        self.local_token = QCheckBox("Require the access token on this computer too (others "
                                     "log in to it)", self)
        self.local_token.setChecked(settings.local_token)
        self.exposure = Note(self)  # its lines whole at any width (a plain label's may be cut)
        self.exposure.setText(LOOPBACK_EXPOSURE)
        self.exposure.setAccessibleName("What sharing on this computer exposes")
        self.port = number_box(SPECS["port"], settings.port, self, name="Share port")
        self.origin = QLineEdit(settings.allow_origin, self)
        self.origin.setPlaceholderText("none: pages of other sites cannot read the captions")
        self.origin.setAccessibleName("Site allowed to read the captions")
        self._origin_saved = settings.allow_origin
        self.origin_problem = status_label(Note(self), "Allow site problem")
        self.origin_problem.setStyleSheet("color: #c62828;")
        self.origin_problem.setVisible(False)
        self.url = Note(self)
        self.url.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse
                                         | Qt.TextInteractionFlag.TextSelectableByKeyboard)
        status_label(self.url, "Share address")  # a screen reader reads the address itself
        self.copy = QPushButton("Cop&y address", self)
        # the token shown only when asked for: a screen may be shared or streamed
        self.reveal = QPushButton("Show &token and QR code", self)
        self.reveal.setCheckable(True)
        self.reveal.setVisible(False)
        self.new_address = QPushButton("New address (old links stop working)", self)
        self.obs = QCheckBox("Send them to OBS Studio as the stream's closed captions", self)
        self.obs.setChecked(settings.obs)
        self.obs_url = QLineEdit(settings.obs_url, self)
        self.obs_url.setAccessibleName("OBS WebSocket address")
        self.obs_password = QLineEdit(settings.obs_password, self)
        self.obs_password.setEchoMode(QLineEdit.EchoMode.Password)
        self.obs_password.setAccessibleName("OBS WebSocket password")
        self.obs_password.setPlaceholderText("OBS: Tools → WebSocket Server Settings")
        self.obs_text = choice_box(SPECS["obs_text"], settings.obs_text, self, "OBS captions carry")
        self.obs_text.setAccessibleDescription("Which text goes to OBS while captions are "
                                               "translated (Settings → Translation)")
        self.obs_status = status_label(QLabel("", self), "OBS captions status")
        self.viewers = status_label(Note(self), "Sharing status")
        self.viewers.setText("Not sharing.")
        self.qr = QLabel(self)
        self.qr.setAccessibleName("QR code of the share address")
        self._qr_for = ""

        url_buttons = QHBoxLayout()  # under the address (a token does not wrap): narrow
        url_buttons.addWidget(self.copy)
        url_buttons.addWidget(self.reveal)
        url_buttons.addStretch(1)
        url_box = QWidget(self)
        url_rows = QVBoxLayout(url_box)
        url_rows.setContentsMargins(0, 0, 0, 0)
        url_rows.addWidget(self.url)
        url_rows.addLayout(url_buttons)
        form = QFormLayout()
        form.addRow("", self.enabled)
        form.addRow("", self.lan)
        form.addRow("", self.local_token)
        form.addRow("", self.exposure)
        form.addRow(row_label(SPECS["port"]), self.port)
        form.addRow(row_label(SPECS["allow_origin"]), self.origin)
        form.addRow("", self.origin_problem)
        form.addRow("Address:", url_box)
        form.addRow("", self.qr)  # under the address, not beside the rows: narrow at a large font
        form.addRow("", self.viewers)
        form.addRow("", self.new_address)
        form.addRow("", self.obs)
        form.addRow(row_label(SPECS["obs_url"]), self.obs_url)
        form.addRow("OBS password:", self.obs_password)
        form.addRow(row_label(SPECS["obs_text"]), self.obs_text)
        form.addRow("", self.obs_status)
        self.form = form
        QVBoxLayout(self).addLayout(form)
        self.copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(self._status.url))
        self.reveal.toggled.connect(lambda _on: self.show_status(self._status))
        self.new_address.clicked.connect(self._ask_new_address)
        self.enabled.toggled.connect(self._enable)
        self.obs.toggled.connect(self._enable)
        self.origin.textChanged.connect(self._check_origin)
        self._enable()
        self._check_origin()
        self._status: ShareStatus = ShareStatus()
        self.enabled.toggled.connect(lambda _on: self.show_status(self._status))  # "…Apply"
        self.show_status(self._status)

    def _enable(self) -> None:
        on = self.enabled.isChecked()
        for w in (self.lan, self.local_token, self.port, self.origin):
            w.setEnabled(on)
        obs_fields: tuple[QWidget, ...] = (self.obs_url, self.obs_password, self.obs_text)
        for field in obs_fields:
            field.setEnabled(self.obs.isChecked())

    def _ask_new_address(self) -> None:
        self.new_address_asked = True
        self.viewers.setText("A new address is made when you apply the settings.")

    def take_new_address(self) -> bool:
        """Whether "New address" was pressed since the last apply (asked once)."""
        asked, self.new_address_asked = self.new_address_asked, False
        return asked

    def origin_error(self) -> str:
        """What is wrong with the "Allow site" text, in one line ("" if nothing)."""
        text = self.origin.text().strip()
        if not text:
            return ""
        try:
            parse_origin(text)
        except ValueError as exc:
            return f"Allow site: {exc}."
        return ""

    def _check_origin(self) -> None:
        problem = self.origin_error()
        if problem != self.origin_problem.text():
            self.origin_problem.setText(problem)
            self.origin_problem.setVisible(bool(problem))

    def _allowed_site(self) -> str:
        """The site to save: the text normalised, or (while it is wrong) the saved one."""
        text = self.origin.text().strip()
        if not text:
            return ""
        try:
            return parse_origin(text)
        except ValueError:
            return self._origin_saved

    def result(self) -> ShareSettings:
        return ShareSettings(enabled=self.enabled.isChecked(), lan=self.lan.isChecked(),
                             port=self.port.value(), allow_origin=self._allowed_site(),
                             local_token=self.local_token.isChecked(),
                             obs=self.obs.isChecked(),
                             obs_url=self.obs_url.text().strip() or OBS_ADDRESS,
                             obs_password=self.obs_password.text(),
                             obs_text=self.obs_text.currentData())

    def show_status(self, status: ShareStatus) -> None:
        """What the running server says (the app calls this every second while shown), and
        what the ticked box will do once applied."""
        self._status = status
        revealed = self.reveal.isChecked()
        self.url.setText(status.url if revealed else MASKED_TOKEN.sub(MASK, status.url))
        self.reveal.setVisible(bool(MASKED_TOKEN.search(status.url)))
        obs = f"OBS captions: {status.obs}" if status.obs else ""
        if self.obs_status.text() != obs:
            self.obs_status.setText(obs)
        self.copy.setEnabled(bool(status.url))
        self.new_address.setVisible(status.lan or status.token)
        if status.problem:
            text = f"✗ {status.problem}" + (f"\nFix: {status.fix}" if status.fix else "")
        elif status.running:
            n = status.viewers
            text = (f"Sharing: {n} viewer{'s' if n != 1 else ''} connected"
                    + (" (the address works on this network)" if status.lan else
                       " (this computer only, with the token)" if status.token else
                       " (this computer only)"))
        else:
            text = "Not sharing."
        if self.enabled.isChecked() != status.running and not status.problem:
            text += (" Sharing starts when you press Apply or OK." if self.enabled.isChecked()
                     else " Sharing stops when you press Apply or OK.")
        if self.viewers.text() != text:
            self.viewers.setText(text)
        show_qr = status.running and status.lan and revealed
        if show_qr and self._qr_for != status.url:
            pix = QPixmap()
            pix.loadFromData(qr_png(status.url, scale=4), "PNG")
            self.qr.setPixmap(pix)
            self._qr_for = status.url
        self.form.setRowVisible(self.qr, show_qr)
