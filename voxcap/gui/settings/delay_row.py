"""Settings → Engine → Delay: the presets (Fast, Balanced, Accurate, Most accurate) first, then
the other delays the model was trained on, each with the model card's word error rate; below,
the lag the chosen one adds. A list, not a number box: it can only hold a delay voxcap uses, so
what it shows is what is saved (a typed 100 once showed "100 ms" while 80 was used)."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QVBoxLayout, QWidget

from ...engine.delays import PRESETS, lag_words
from ...settings_schema import Spec
from ..a11y import status_label
from .fields import Note

WER_NOTE = ("Word error rate: the model card's average on FLEURS (lower is better). Only the "
            "delays the model was trained on are offered.")


class DelayRow(QWidget):
    """The delay list; ``value()`` is the delay chosen, in ms. ``note`` (the lag it adds, what
    the error rate is) is the form's row below it: a wrapped label sized by the form."""

    def __init__(self, spec: Spec, value: int, parent=None) -> None:
        super().__init__(parent)
        self.box = QComboBox(self)
        self.box.setAccessibleName("Transcription delay")
        self.box.setToolTip("Less delay: captions sooner; more: more accurate.")
        texts = dict(spec.choices)
        presets = [p.delay_ms for p in PRESETS]
        for ms in presets:
            self.box.addItem(texts[ms], ms)
        self.box.insertSeparator(self.box.count())
        for ms in spec.values:
            if ms not in presets:
                self.box.addItem(texts[ms], ms)
        # the widest entry would widen the whole dialog: the list opens as wide as it needs
        self.box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.box.setMinimumContentsLength(34)
        self.box.view().setMinimumWidth(self.box.view().sizeHintForColumn(0) + 24)
        self.note = status_label(Note(self), "Delay note")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.box)
        self.setFocusProxy(self.box)
        self.box.currentIndexChanged.connect(self._show_note)
        self.set_value(value)

    def value(self) -> int:
        return int(self.box.currentData())

    def set_value(self, value: int) -> None:
        self.box.setCurrentIndex(max(0, self.box.findData(value)))
        self._show_note()

    def _show_note(self) -> None:
        lag = lag_words(self.value())
        self.note.setText(f"{lag}\n{WER_NOTE}")
        # a screen reader says the entry (its error rate) and, with it, the lag it adds
        self.box.setAccessibleDescription(f"{lag} Less delay: captions sooner; more: more accurate.")
