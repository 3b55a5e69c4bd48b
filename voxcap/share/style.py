"""The caption page's default look: the overlay's style settings as plain values.

``page_style(overlay, translation)`` takes anything with the overlay's fields
(``app.settings.OverlaySettings``) and what the app shows of translated lines ("original",
"both" or "translation": ``TranslationSettings.shown()``), and gives the dict the page reads
(every value can be overridden by a URL parameter there; the page's own choice of what to
show, kept in the viewer's browser, goes before the app's).
"""

from __future__ import annotations

PT_TO_PX = 96 / 72  # CSS pixels per point


def page_style(overlay, translation: str = "original") -> dict:
    return {
        "translation": translation,
        "font_size_px": round(overlay.font_size * PT_TO_PX),
        "font_family": overlay.font_family,
        "bold": overlay.bold,
        "text_color": overlay.text_color,
        "background_color": overlay.background_color,
        "background_opacity": overlay.background_opacity,
        "outline": overlay.outline,
        "lines": overlay.lines,
    }
