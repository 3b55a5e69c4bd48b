"""The Qt binding keeps Python's reference counts: PySide6-Essentials 6.12.0 on Python 3.11
returns None from every void method without counting the reference, so None's count drops by one
per call and the interpreter aborts ("deallocating None") after a few thousand calls, i.e. within
a minute of captioning. pyproject.toml excludes that version; this catches a binding that does it."""

from __future__ import annotations

import sys

from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QWidget


def test_void_and_bool_calls_keep_reference_counts(qtbot):
    w = QWidget()
    qtbot.addWidget(w)
    img = QImage(20, 20, QImage.Format.Format_ARGB32_Premultiplied)
    p = QPainter(img)
    before = sys.getrefcount(None), sys.getrefcount(True), sys.getrefcount(False)
    for _ in range(200):
        w.update()
        w.resize(10, 10)
        p.save()
        p.setBrush(QColor(1, 2, 3))
        p.drawRect(QRect(0, 0, 5, 5))
        p.restore()
        w.isVisible()
        w.isHidden()
    after = sys.getrefcount(None), sys.getrefcount(True), sys.getrefcount(False)
    p.end()
    assert all(abs(a - b) < 50 for a, b in zip(before, after, strict=True)), (before, after)
