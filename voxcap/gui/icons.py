"""The app icon, drawn (no image files to ship)."""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QIcon, QPainter, QPixmap


def app_icon() -> QIcon:
    icon = QIcon()
    for size in (16, 32, 64, 128):
        pm = QPixmap(size, size)
        pm.fill(Qt.GlobalColor.transparent)
        p = QPainter(pm)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setBrush(QColor("#263238"))
        p.setPen(Qt.PenStyle.NoPen)
        p.drawRoundedRect(QRectF(0, 0, size, size), size * 0.2, size * 0.2)
        font = QFont("DejaVu Sans")
        font.setBold(True)
        font.setPixelSize(int(size * 0.45))
        p.setFont(font)
        p.setPen(QColor("#ffd54f"))
        p.drawText(QRectF(0, 0, size, size), Qt.AlignmentFlag.AlignCenter, "CC")
        p.end()
        icon.addPixmap(pm)
    return icon
