"""Settings → Caption overlay: lines, font, size, colours, opacity, outline."""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (
    QCheckBox,
    QColorDialog,
    QFontComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QPushButton,
)

from ...app.settings import OverlaySettings
from ...settings_schema import specs
from .fields import check_box, number_box, number_of, row_label, wrap

SPECS = specs(OverlaySettings)


def readable_on(background: QColor) -> str:
    """Black or white, whichever contrasts more with ``background`` (WCAG 2's luminance: yellow's
    HSL lightness is 50 %, yet white on it cannot be read)."""
    def linear(v: float) -> float:
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4
    lum = (0.2126 * linear(background.redF()) + 0.7152 * linear(background.greenF())
           + 0.0722 * linear(background.blueF()))
    # contrast with black (lum + 0.05) / 0.05 against white's 1.05 / (lum + 0.05)
    return "#000000" if (lum + 0.05) ** 2 > 0.05 * 1.05 else "#ffffff"


class ColorButton(QPushButton):
    def __init__(self, color: str, name: str, parent=None) -> None:
        super().__init__(parent)
        self.setAccessibleName(name)
        self._name = name
        # Return in the dialog is OK's, even with the focus here: a focused auto-default button
        # would take it and open the colour chooser again (after Alt+A, for one)
        self.setAutoDefault(False)
        self.set_color(color)
        self.clicked.connect(self._pick)

    def set_color(self, color: str) -> None:
        self.color = QColor(color).name()
        self.setText(self.color)
        self.setStyleSheet(f"background: {self.color}; color: {readable_on(QColor(color))};")

    def _pick(self) -> None:
        c = QColorDialog.getColor(QColor(self.color), self, self._name)
        if c.isValid():
            self.set_color(c.name())


class OverlayPanel(QGroupBox):
    def __init__(self, o: OverlaySettings, parent=None) -> None:
        super().__init__("Caption overlay", parent)
        self.lines = number_box(SPECS["lines"], o.lines, self, name="Caption lines in the overlay")
        self.font_family = QFontComboBox(self)
        if o.font_family:
            self.font_family.setCurrentFont(QFont(o.font_family))
        self.font_family.setAccessibleName("Overlay font")
        self.font_default = QCheckBox("Desktop default", self)
        self.font_default.setChecked(not o.font_family)
        self.font_size = number_box(SPECS["font_size"], o.font_size, self, suffix=" pt",
                                    name="Overlay font size")
        self.bold = check_box(SPECS["bold"], o.bold, self)
        self.text_color = ColorButton(o.text_color, "Caption text colour", self)
        self.bg_color = ColorButton(o.background_color, "Caption background colour", self)
        self.opacity = number_box(SPECS["background_opacity"], o.background_opacity, self,
                                  scale=100, suffix=" %", name="Background opacity")
        self.outline = check_box(SPECS["outline"], o.outline, self)
        font_row = QHBoxLayout()
        font_row.addWidget(self.font_family, 1)
        font_row.addWidget(self.font_default)
        size_row = QHBoxLayout()
        size_row.addWidget(self.font_size)
        size_row.addWidget(self.bold)
        size_row.addStretch(1)
        self.form = QFormLayout(self)
        for name, field in (("lines", self.lines), ("font_family", wrap(font_row)),
                            ("font_size", wrap(size_row)), ("text_color", self.text_color),
                            ("background_color", self.bg_color),
                            ("background_opacity", self.opacity)):
            self.form.addRow(row_label(SPECS[name]), field)
        self.form.addRow("", self.outline)
        self.font_default.toggled.connect(lambda on: self.font_family.setEnabled(not on))
        self.font_family.setEnabled(not self.font_default.isChecked())

    def result_into(self, o: OverlaySettings) -> None:
        o.lines = self.lines.value()
        o.font_family = "" if self.font_default.isChecked() else self.font_family.currentFont().family()
        o.font_size = self.font_size.value()
        o.bold = self.bold.isChecked()
        o.text_color = self.text_color.color
        o.background_color = self.bg_color.color
        o.background_opacity = number_of(self.opacity, SPECS["background_opacity"], scale=100)
        o.outline = self.outline.isChecked()
