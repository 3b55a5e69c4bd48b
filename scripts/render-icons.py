"""Render resources/voxcap.svg to the PNG sizes the freedesktop icon theme uses (needs PySide6).

    python scripts/render-icons.py        # writes resources/voxcap-<size>.png
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
RESOURCES = Path(__file__).resolve().parent.parent / "resources"


def main() -> int:
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1] + ["-platform", "offscreen"])
    renderer = QSvgRenderer(str(RESOURCES / "voxcap.svg"))
    if not renderer.isValid():
        print("resources/voxcap.svg is not valid SVG", file=sys.stderr)
        return 1
    for size in SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter, QRectF(0, 0, size, size))
        painter.end()
        out = RESOURCES / f"voxcap-{size}.png"
        image.save(str(out))
        print(out)
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
