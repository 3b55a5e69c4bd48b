"""Settings → Captions and start-up: masking, announcing lines to screen readers, how the app
starts, echo cancellation for "Both", the caption watchdog's two times, when a silent source
is said."""

from __future__ import annotations

from PySide6.QtWidgets import QDoubleSpinBox, QGroupBox, QLabel, QVBoxLayout, QWidget

from ...app.settings import AppSettings
from ...settings_schema import specs
from .fields import check_box, choice_box, decimal_box, number_of

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
        watch: list[QWidget] = []  # the caption watchdog (app.session.caption_watchdog)
        boxes: list[QDoubleSpinBox] = []
        for name in ("no_captions_after_s", "fresh_session_after_s", "no_sound_after_s"):
            box = decimal_box(SPECS[name], getattr(s, name), self, decimals=1, step=1.0,
                              suffix=" s", name=SPECS[name].label)
            label = QLabel(SPECS[name].label + ":", self)
            label.setBuddy(box)
            watch += [label, box]
            boxes.append(box)
        self.no_captions_after, self.fresh_session_after, self.no_sound_after = boxes
        lay = QVBoxLayout(self)
        for w in (self.mask_profanity, self.announce, self.start_min, self.start_cap, echo_label,
                  self.echo, *watch):
            lay.addWidget(w)
        lay.addStretch(1)

    def result_into(self, s: AppSettings) -> None:
        s.mask_profanity = self.mask_profanity.isChecked()
        s.announce_captions = self.announce.isChecked()
        s.start_minimized = self.start_min.isChecked()
        s.start_captioning = self.start_cap.isChecked()
        s.echo_cancel = self.echo.currentData()
        s.no_captions_after_s = number_of(self.no_captions_after, SPECS["no_captions_after_s"])
        s.fresh_session_after_s = number_of(self.fresh_session_after, SPECS["fresh_session_after_s"])
        s.no_sound_after_s = number_of(self.no_sound_after, SPECS["no_sound_after_s"])
