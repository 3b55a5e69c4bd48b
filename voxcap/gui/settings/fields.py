"""The Settings dialog's widgets made from the settings' declarations (``voxcap.settings_schema``):
a spin box has the setting's range (and "Automatic" just below it where None is allowed), a
list its choices in their words, a check box its label. Nothing about a setting's values is
written here again, so the dialog cannot offer less or more than the settings file keeps. Also
``Note``: a wrapped note under a field, never given fewer lines than its text needs."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QSpinBox,
    QWidget,
)

from ...settings_schema import Spec


def _range(spec: Spec) -> tuple[float, float]:
    if spec.low is None or spec.high is None:
        raise ValueError(f"{spec.label!r} has no range: a spin box needs one")
    return spec.low, spec.high


def number_box(spec: Spec, value, parent, *, scale: int = 1, suffix: str = "",
               step: int | None = None, name: str = "") -> QSpinBox:
    """A spin box over the setting's range shown ``scale`` times (opacity: percent); with
    ``spec.automatic``, None is the value just below the range, shown as those words."""
    low, high = _range(spec)
    box = QSpinBox(parent)
    box.setRange(round(low * scale - (1 if spec.automatic else 0)), round(high * scale))
    box.setSingleStep(step or spec.step or 1)
    box.setValue(box.minimum() if value is None else round(value * scale))
    _finish(box, spec, suffix, name)
    return box


def decimal_box(spec: Spec, value, parent, *, decimals: int, step: float,
                suffix: str = "", name: str = "") -> QDoubleSpinBox:
    """``number_box`` with ``decimals`` after the point (a GiB budget in halves)."""
    low, high = _range(spec)
    below = 10 ** -decimals  # the smallest step the box can show
    box = QDoubleSpinBox(parent)
    box.setDecimals(decimals)
    box.setRange(round(low - (below if spec.automatic else 0), decimals), round(high, decimals))
    box.setSingleStep(step)
    box.setValue(box.minimum() if value is None else round(value, decimals))
    _finish(box, spec, suffix, name)
    return box


def _finish(box: QSpinBox | QDoubleSpinBox, spec: Spec, suffix: str, name: str) -> None:
    if spec.automatic:
        box.setSpecialValueText(spec.automatic)
    box.setSuffix(suffix)
    box.setAccessibleName(name)


def number_of(box: QSpinBox | QDoubleSpinBox, spec: Spec, *, scale: int = 1):
    """The setting's value of a box made by ``number_box`` (None: "Automatic")."""
    value = box.value()
    if spec.automatic and value < _range(spec)[0] * scale:
        return None
    value = value / scale if scale != 1 else value
    if spec.step:
        value = value // spec.step * spec.step
    return value


def choice_box(spec: Spec, value, parent, name: str = "") -> QComboBox:
    """A list of the setting's choices in their words, the current one selected."""
    box = QComboBox(parent)
    for key, text in spec.choices:
        box.addItem(text, key)
    box.setCurrentIndex(max(0, box.findData(value)))
    box.setAccessibleName(name)
    return box


def check_box(spec: Spec, value: bool, parent) -> QCheckBox:
    box = QCheckBox(spec.label, parent)
    box.setChecked(value)
    return box


def row_label(spec: Spec) -> str:
    """The label of the setting's row in a form (with its mnemonic)."""
    return spec.label + ":"


def wrap(layout) -> QWidget:
    """A row's layout as one widget (a field and its button)."""
    w = QWidget()
    layout.setContentsMargins(0, 0, 0, 0)
    w.setLayout(layout)
    return w


def point_buddies_at_fields(form: QFormLayout) -> None:
    """A row whose field is a container (a line edit and its button): its label's mnemonic
    goes to the first control in it, not to the container."""
    for row in range(form.rowCount()):
        label_item = form.itemAt(row, QFormLayout.ItemRole.LabelRole)
        field_item = form.itemAt(row, QFormLayout.ItemRole.FieldRole)
        label = label_item.widget() if label_item else None
        field = field_item.widget() if field_item else None
        if not isinstance(label, QLabel) or field is None:
            continue
        if field.focusPolicy() & Qt.FocusPolicy.TabFocus:
            continue
        controls = [w for w in field.findChildren(QWidget)
                    if w.focusPolicy() & Qt.FocusPolicy.TabFocus]
        if controls:
            label.setBuddy(controls[0])


class Note(QLabel):
    """A word-wrapped note under a field, never given fewer lines than its text needs at its
    width. A window whose preferred size is over two thirds of the screen opens at its smallest,
    and a plain QLabel's smallest is less than its lines (the precision's note lost its last
    line, all of it at a large font)."""

    def __init__(self, parent=None) -> None:
        super().__init__("", parent)
        self.setWordWrap(True)
        self._laid_out = False  # no width of its own before the layout gives it one

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        if self._laid_out and self.text():
            hint.setHeight(max(hint.height(), self.heightForWidth(self.width())))
        return hint

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._laid_out = True
            self.updateGeometry()  # the lines it needs at the new width

