"""Settings → Translation: the language finished caption lines are translated into, what the
overlay and screen readers get (the original, both, or the translation alone), and the models
(``translation_models``: installed pairs, download, offline install; the same core as
``voxcap translate-models``)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFormLayout, QWidget

from ...app.translation_settings import TranslationSettings
from ...settings_schema import specs
from .fields import choice_box, row_label
from .translation_models import ModelsSection

SPECS = specs(TranslationSettings)


class TranslationPanel(QWidget):
    def __init__(self, t: TranslationSettings, parent=None, models_dir: Path | None = None) -> None:
        super().__init__(parent)
        self.target = choice_box(SPECS["translate_to"], t.translate_to, self,
                                 "Translate captions into")
        self.show_choice = choice_box(SPECS["show"], t.show, self, "Translation shown")
        self.show_choice.setAccessibleDescription(
            "In the caption overlay and to screen readers; a line shows its original until its "
            "translation comes")
        self.models = ModelsSection(self, models_dir)
        self.form = QFormLayout(self)
        for name, box in (("translate_to", self.target), ("show", self.show_choice)):
            self.form.addRow(row_label(SPECS[name]), box)
        self.form.addRow(self.models)
        self.target.currentIndexChanged.connect(self._follow_target)
        self._follow_target()

    def _follow_target(self) -> None:
        self.show_choice.setEnabled(bool(self.target.currentData()))  # nothing to show while off

    def result_into(self, t: TranslationSettings) -> None:
        t.translate_to = self.target.currentData()
        t.show = self.show_choice.currentData()
