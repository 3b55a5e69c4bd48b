"""Settings → Captions and start-up: masking, announcing lines to screen readers, how the app
starts, echo cancellation for "Both"."""

from __future__ import annotations

from PySide6.QtWidgets import QGroupBox, QLabel, QVBoxLayout

from ...app.settings import AppSettings
from ...settings_schema import specs
from .fields import check_box, choice_box

SPECS = specs(AppSettings)


class CaptionsPanel(QGroupBox):
    def __init__(self, s: AppSettings, parent=None) -> None:
        super().__init__("Captions and start-up", parent)
        self.mask_profanity = check_box(SPECS["mask_profanity"], s.mask_profanity, self)
        self.announce = check_box(SPECS["announce_captions"], s.announce_captions, self)
        self.start_min = check_box(SPECS["start_minimized"], s.start_minimized, self)
        self.start_cap = check_box(SPECS["start_captioning"], s.start_captioning, self)
        self.echo = choice_box(SPECS["echo_cancel"], s.echo_cancel, self,
                               "Echo cancellation for Both")
        echo_label = QLabel(SPECS["echo_cancel"].label + ":", self)
        echo_label.setBuddy(self.echo)
        lay = QVBoxLayout(self)
        for w in (self.mask_profanity, self.announce, self.start_min, self.start_cap, echo_label,
                  self.echo):
            lay.addWidget(w)
        lay.addStretch(1)

    def result_into(self, s: AppSettings) -> None:
        s.mask_profanity = self.mask_profanity.isChecked()
        s.announce_captions = self.announce.isChecked()
        s.start_minimized = self.start_min.isChecked()
        s.start_captioning = self.start_cap.isChecked()
        s.echo_cancel = self.echo.currentData()
