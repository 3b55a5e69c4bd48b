"""A small line chart of the last minute, drawn with QPainter (QtCharts is not in
PySide6-Essentials)."""

from __future__ import annotations

import time

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

WINDOW_S = 60.0


class MiniChart(QWidget):
    def __init__(self, title: str, unit: str, color: str = "#1e88e5",
                 budget: float | None = None, budget_label: str = "", parent=None) -> None:
        super().__init__(parent)
        self.title, self.unit, self.color = title, unit, QColor(color)
        self.budget, self.budget_label = budget, budget_label
        self.points: list[tuple[float, float]] = []
        self.setMinimumHeight(64)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setAccessibleName(f"{title}, last minute")

    def sizeHint(self) -> QSize:
        return QSize(260, 72)

    def set_points(self, points: list[tuple[float, float]]) -> None:
        self.points = points
        last = f"{points[-1][1]:.1f} {self.unit}" if points else "n/a"
        self.setAccessibleDescription(f"latest {last}")
        self.update()

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        r = QRectF(self.rect()).adjusted(1, 1, -1, -1)
        p.fillRect(r, pal.base())
        p.setPen(QPen(pal.mid().color(), 1))
        p.drawRect(r)
        plot = r.adjusted(4, 18, -4, -4)
        now = time.time()
        values = [v for _, v in self.points]
        top = scale_top(values, self.budget)

        def pt(t: float, v: float) -> QPointF:
            x = plot.left() + (1 - (now - t) / WINDOW_S) * plot.width()
            y = plot.bottom() - min(v, top) / top * plot.height()
            return QPointF(x, y)

        if self.budget:
            p.setPen(QPen(QColor("#e53935"), 1, Qt.PenStyle.DashLine))
            y = pt(now, self.budget).y()
            p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
            p.drawText(QRectF(plot.left(), y - 14, plot.width(), 14),
                       Qt.AlignmentFlag.AlignRight, self.budget_label)
        if len(self.points) >= 2:
            path = QPainterPath(pt(*self.points[0]))
            for t, v in self.points[1:]:
                path.lineTo(pt(t, v))
            p.setPen(QPen(self.color, 2))
            p.drawPath(path)
        p.setPen(pal.text().color())
        last = f"{values[-1]:.1f} {self.unit}" if values else "n/a"
        p.drawText(r.adjusted(5, 2, -5, 0), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop,
                   f"{self.title}: {last}")
        if values:  # an empty chart has no scale worth printing ("max 1e-09")
            p.drawText(r.adjusted(5, 2, -5, 0),
                       Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop,
                       f"max {top:g} {self.unit}".rstrip())
        p.end()


def scale_top(values: list[float], budget: float | None = None) -> float:
    """The chart's top: a round number above the values (and the budget line), at least 1 unit
    (a flat zero line is no reason for a scale of "1e-09")."""
    return _nice(max([*values, *([budget * 1.25] if budget else []), 1.0]))


def _nice(v: float) -> float:
    """1, 2 or 5 times a power of ten, at least ``v``."""
    import math

    exp = math.floor(math.log10(v)) if v > 0 else 0
    for m in (1, 2, 5, 10):
        if m * 10 ** exp >= v:
            return m * 10 ** exp
    return 10 ** (exp + 1)
