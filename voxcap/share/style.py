"""The caption page's default look: the overlay's style settings as plain values.

``page_style(overlay)`` takes anything with the overlay's fields (``app.settings.OverlaySettings``)
and gives the dict the page reads (every value can be overridden by a URL parameter there).
"""

from __future__ import annotations

PT_TO_PX = 96 / 72  # CSS pixels per point


def page_style(overlay) -> dict:
    return {
        "font_size_px": round(overlay.font_size * PT_TO_PX),
        "font_family": overlay.font_family,
        "bold": overlay.bold,
        "text_color": overlay.text_color,
        "background_color": overlay.background_color,
        "background_opacity": overlay.background_opacity,
        "outline": overlay.outline,
        "lines": overlay.lines,
    }
