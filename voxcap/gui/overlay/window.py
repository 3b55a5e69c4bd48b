"""The caption overlay: a frameless, translucent, always-on-top window with the last lines.

Legibility: large bold text (28 pt by default) with a dark outline, on a semi-opaque rounded
band (opacity 0 leaves the outline alone). Each wrapped row is rendered once into an image (the
outline: the glyphs drawn dark at 8-16 offsets around, then the text on top) and only copied
afterwards, so a repaint costs about a millisecond. No flicker and no jumps: text is append-only (see
``captions.assembly``), left-aligned (a growing line never shifts sideways), wrapped greedily
(appending words never re-wraps what is shown), bottom-aligned (a new line pushes the older ones
up by exactly one line), painted in one pass into Qt's double-buffered backing store, and only
when something changed.

Translations (``add_translation``, ``set_translation_shown``): a finished line's translation is
matched to the line by stream and start time (``app.line_translation.line_key``: the translator's
line numbers are not the overlay's) and shown under it in italics, at the user's size and colour
("both": each caption line then takes two rows, so the overlay is twice as tall), or instead of
it ("translation"). Each line shows its own translation, which comes within a second of its end;
a translation on screen is never rewritten (the better one of the line's whole sentence, which
comes later, goes to the history and exports). The original is shown as it is spoken, exactly as
without translation, and stays until its translation comes (a moment after the line ends), or
when it is not translated.

Two streams: the speaker's label ("Them:", "You:") starts each of its paragraphs, in the
speaker's colour, and a bar of that colour marks every row, so a wrapped row whose label has
scrolled away still says who is talking.

Moving and resizing: drag anywhere to move, drag within 10 px of an edge to resize (on Wayland
the compositor moves it). Position, size and monitor are saved (``geometryChangedByUser``) and
restored with ``place_overlay``, which brings the overlay back on screen when its monitor is gone.

State: a band above the rows (``set_status``, decided by ``app.overlay_status``) says anything
that is not live captioning, in the user's font, size and colours: starting, waiting, restarting,
paused, stopped, an engine error with its fix, captions arriving late. While the rows shown are
old (paused, stopped, restarting, an error) they are dimmed, so they never pass for current
speech. Screen readers get the band in the description and hear a new topic once; finished
caption lines are announced, once each, speaker first (``app.caption_announcer``).

Keyboard: ``start_keyboard_mode`` (View → Move/resize overlay): arrows move, Shift+arrows
resize, Ctrl for finer steps, Enter or Esc done.

Click-through (``set_click_through``): the mouse passes through to the windows below. The way
back is in the main window and the tray menu (and ``voxcap gui --toggle-click-through`` from a
desktop shortcut); the overlay says so for a few seconds when it is turned on.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable

from PySide6.QtCore import QPoint, QPointF, QRect, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QColor,
    QFont,
    QFontMetricsF,
    QGuiApplication,
    QImage,
    QPainter,
    QTextLayout,
)
from PySide6.QtWidgets import QMenu, QWidget

from ...app.caption_announcer import CaptionAnnouncer
from ...app.line_translation import line_key
from ...app.overlay_status import OverlayStatus
from ...app.settings import OverlaySettings
from ...app.translation_settings import BOTH, ORIGINAL, TRANSLATION
from ...captions.assembly import CaptionLine
from ...events import LineTranslated
from ..a11y import announce

MAX_KEPT = 40  # caption lines kept for display (the history keeps everything)
ROW_IMAGES = 48  # rendered rows kept (outlined text is costly to draw: each row is drawn once)
EDGE = 10
MARGIN_X, MARGIN_Y = 18, 8
MIN_W, MIN_H = 200, 40
LABEL_COLORS = ("#ffd54f", "#80deea", "#c5e1a5", "#f48fb1")
DIM_OPACITY = 0.4  # rows that are not current: still readable, plainly not live
KEY_STEP, FINE_STEP = 20, 2  # pixels a keyboard-mode arrow moves or resizes
KEYBOARD_HINT = ("Moving the overlay: arrows move it, Shift+arrows resize it (Ctrl: finer), "
                 "Enter or Esc when done.")
HINT = ("Click-through is on: clicks go to the windows below. Turn it off in the voxcap "
        "window (Ctrl+T) or its tray menu.")
HINT_FLAGS = Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft | Qt.TextFlag.TextWordWrap
Rect = tuple[int, int, int, int]
Row = tuple[str, int, str, bool]  # text, label characters in it, label, a translation under its line


def place_overlay(saved: Rect | None, saved_screen: str, screens: list[tuple[str, Rect]],
                  primary: int, height: int) -> Rect:
    """Where the overlay goes: its saved rectangle if its monitor is still there (clamped into
    that monitor's available area), else wherever it still mostly is, else the bottom of the
    primary monitor (keeping its size if that fits). ``screens``: (name, available area)."""
    def clamp(r: Rect, area: Rect) -> Rect:
        ax, ay, aw, ah = area
        w, h = min(max(r[2], MIN_W), aw), min(max(r[3], MIN_H), ah)
        return (min(max(r[0], ax), ax + aw - w), min(max(r[1], ay), ay + ah - h), w, h)

    def overlap(r: Rect, area: Rect) -> int:
        w = min(r[0] + r[2], area[0] + area[2]) - max(r[0], area[0])
        h = min(r[1] + r[3], area[1] + area[3]) - max(r[1], area[1])
        return max(0, w) * max(0, h)

    if not screens:
        return saved or (0, 0, 800, height)
    if saved is not None:
        for name, area in screens:
            if name == saved_screen:
                return clamp(saved, area)
        best = max(screens, key=lambda s: overlap(saved, s[1]))
        if overlap(saved, best[1]) * 2 >= saved[2] * saved[3]:
            return clamp(saved, best[1])
    ax, ay, aw, ah = screens[min(max(primary, 0), len(screens) - 1)][1]
    w = min(saved[2], aw) if saved else min(int(aw * 0.7), 1600)
    h = min(saved[3], ah) if saved else height
    return (ax + (aw - w) // 2, ay + ah - h - max(24, ah // 12), w, h)


EMPTY_DESCRIPTION = "No captions yet. The full text is in the voxcap window's caption history."


class CaptionOverlay(QWidget):
    clickThroughChanged = Signal(bool)
    geometryChangedByUser = Signal()
    hideRequested = Signal()
    settingsRequested = Signal()
    keyboardModeEnded = Signal()

    def __init__(self, settings: OverlaySettings) -> None:
        super().__init__(None)
        self.setWindowFlags(Qt.WindowType.Window | Qt.WindowType.FramelessWindowHint
                            | Qt.WindowType.WindowStaysOnTopHint | Qt.WindowType.Tool)
        self.setAttribute(Qt.WidgetAttribute.WA_TranslucentBackground)
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
        self.setWindowTitle("voxcap captions")
        self.setAccessibleName("Live captions")
        self.setAccessibleDescription(EMPTY_DESCRIPTION)
        # screen readers read the rows on screen as the description, at most twice a second
        self._a11y_timer = QTimer(self, singleShot=True, interval=500)
        self._a11y_timer.timeout.connect(self._sync_accessible_text)
        self.setMouseTracking(True)
        self._lines: OrderedDict[int, CaptionLine] = OrderedDict()
        self._cache: dict[int, tuple[tuple, list[Row]]] = {}  # line id -> rows (layout)
        self._images: OrderedDict[Row, QImage] = OrderedDict()
        self._translations: OrderedDict[tuple, str] = OrderedDict()  # line_key -> translation
        self.translation_shown = ORIGINAL  # the app's translation.shown()
        self._label_colors: dict[str, QColor] = {}
        self.show_labels = False
        self._pending: list = []
        # (stamps, painted_at): caption-lag measurement
        self.on_painted: Callable[[list, float], None] | None = None
        self.paints = 0
        self._hint = ""
        self._hint_timer = QTimer(self, singleShot=True, interval=8000)
        self._hint_timer.timeout.connect(self._clear_hint)
        self._drag: tuple | None = None
        self.placed: QRect | None = None  # where the app last put it for now
        self._click_through = False
        self._save_timer = QTimer(self, singleShot=True, interval=400)
        self._save_timer.timeout.connect(self.geometryChangedByUser)
        self.status = OverlayStatus()
        self.announcer = CaptionAnnouncer()
        self.announce_lines = lambda: True  # the app's setting (announce_captions)
        self._announce_timer = QTimer(self, interval=1000)  # a line idle mid-sentence
        self._announce_timer.timeout.connect(self._announce_idle)
        self._announce_timer.start()
        self.keyboard_mode = False
        self.settings = settings
        self.apply_settings(settings)

    # ------------------------------------------------------------------ appearance ----
    def apply_settings(self, s: OverlaySettings) -> None:
        self.settings = s
        font = QFont(s.font_family) if s.font_family else QFont()
        if not s.font_family:
            font.setStyleHint(QFont.StyleHint.SansSerif)
            font.setFamilies(["DejaVu Sans", "Noto Sans", "Segoe UI", "Helvetica", "Arial"])
        font.setPointSize(s.font_size)
        font.setBold(s.bold)
        self._font = font
        self._fm = QFontMetricsF(font)
        self._translation_font = QFont(font)  # the same size: a deaf reader may read only it
        self._translation_font.setItalic(True)
        self._text_color = QColor(s.text_color)
        bg = QColor(s.background_color)
        bg.setAlphaF(max(0.0, min(1.0, s.background_opacity)))
        self._bg = bg
        self._outline = s.outline
        self._cache.clear()
        self._images.clear()
        self.update()

    def line_height(self) -> int:
        return int(self._fm.lineSpacing() + 0.999)

    def fitted_height(self, lines: int | None = None) -> int:
        return (lines or self.settings.lines) * self._rows_per_line() * self.line_height() \
            + 2 * MARGIN_Y

    def _rows_per_line(self) -> int:
        """Rows a caption line takes (its translation under it: two)."""
        return 2 if self.translation_shown == BOTH else 1

    def fit_height(self) -> None:
        """Height for exactly the configured number of lines (after a font/lines change, or
        "both" turning a line into two rows). Its bottom stays where it is (the newest line is
        the last row, where the reader looks), its top inside the screen's free area: grown
        downwards from the bottom of the screen, where it starts, its newest rows were off it."""
        h = self.fitted_height()
        area = self.screen().availableGeometry()
        g = self.geometry()
        top = max(area.top(), min(g.bottom() + 1 - h, area.bottom() + 1 - h))
        self.setGeometry(g.x(), top, g.width(), h)

    # -------------------------------------------------------------------- captions ----
    def add_updates(self, updates, stamp=None) -> None:
        """CaptionUpdates from the assembler; ``stamp`` (anything) is handed to ``on_painted``
        once the text is on screen."""
        changed = False
        if self.announce_lines():
            for text in self.announcer.feed(updates, time.monotonic()):
                announce(self, text)
        for u in updates:
            line = u.line
            if u.added or line.line_id not in self._lines:
                changed = True
            self._lines[line.line_id] = line
            self._lines.move_to_end(line.line_id)
        while len(self._lines) > MAX_KEPT:
            old, _ = self._lines.popitem(last=False)
            self._cache.pop(old, None)
        if changed:
            if stamp is not None:
                self._pending.append(stamp)
            self.update()
            if not self._a11y_timer.isActive():
                self._a11y_timer.start()

    def add_translation(self, event: LineTranslated) -> None:
        """A finished line's translation (or its language alone): shown with its line, told
        to screen readers as the user shows it. A translation on screen stays as it is (words
        changing under the reader's eyes are worse than a line translated alone): a line's share
        of its sentence's translation (``refined``) only fills a line that has none."""
        key = line_key(event.stream_id, event.start_s)
        if event.translation and not (event.refined and key in self._translations):
            self._translations[key] = event.translation
            while len(self._translations) > MAX_KEPT:
                self._translations.popitem(last=False)
            self.update()
            if not self._a11y_timer.isActive():
                self._a11y_timer.start()
        if self.announce_lines():
            for text in self.announcer.translated(event):
                announce(self, text)

    def set_translation_shown(self, shown: str) -> None:
        """``translation.shown()``: the original only, both, or the translation alone."""
        self.translation_shown = self.announcer.shown = shown
        self._cache.clear()
        self.update()
        self._sync_accessible_text()

    def _announce_idle(self) -> None:
        if self.announce_lines():
            for text in self.announcer.idle(time.monotonic()):
                announce(self, text)

    def set_status(self, status: OverlayStatus, spoken: bool = True) -> None:
        """The state band's text and whether the rows shown are current; screen readers hear a
        new topic once (an engine error at once; one the app's notice says, from the notice),
        the figures in it only in the description. ``spoken`` False: another part says it (the
        main window's state), so it is heard once."""
        old, self.status = self.status, status
        if status == old:
            return
        self.update()
        self._sync_accessible_text()
        if spoken and status.text and status.topic != old.topic and not status.said_by_notice:
            announce(self, status.text, assertive=status.error)

    def clear(self) -> None:
        self.announcer.reset()
        self._lines.clear()
        self._translations.clear()
        self._cache.clear()
        self.update()
        self._sync_accessible_text()

    def _sync_accessible_text(self) -> None:
        rows = self.visible_text()
        if rows and not self.status.rows_current:
            rows = ["Earlier:"] + rows
        text = "\n".join(([self.status.text] if self.status.text else [])
                         + rows) or EMPTY_DESCRIPTION
        if text != self.accessibleDescription():
            self.setAccessibleDescription(text)

    def visible_text(self) -> list[str]:
        """The caption rows now on screen, as text (tests, accessibility)."""
        return [row[0].strip() for row in self._visible_rows(self._caption_rows())]

    def label_color(self, label: str) -> QColor:
        if label not in self._label_colors:
            self._label_colors[label] = QColor(LABEL_COLORS[len(self._label_colors) % len(LABEL_COLORS)])
        return self._label_colors[label]

    # --------------------------------------------------------------------- layout ----
    def _rows_for(self, line: CaptionLine, prev_stream: str | None) -> list[Row]:
        """The line wrapped to the overlay's width (its translation's rows under it, or in its
        place, as the user shows it)."""
        show = self.show_labels and (line.paragraph_start or prev_stream != line.stream_id)
        prefix = f"{line.label}: " if show else ""
        translation = ("" if self.translation_shown == ORIGINAL else
                       self._translations.get(line_key(line.stream_id, line.start_s), ""))
        width = max(50, self.width() - 2 * MARGIN_X)
        key = (prefix, line.text, translation, width)
        hit = self._cache.get(line.line_id)
        if hit is not None and hit[0] == key:
            return hit[1]
        if translation and self.translation_shown == TRANSLATION:
            rows = self._wrap(prefix, translation, line.label, width, under=False)
        else:
            rows = self._wrap(prefix, line.text, line.label, width, under=False)
            if translation:
                rows += self._wrap("", translation, line.label, width, under=True)
        self._cache[line.line_id] = (key, rows)
        return rows

    def _wrap(self, prefix: str, text: str, label: str, width: int, *, under: bool) -> list[Row]:
        """``prefix + text`` in rows of ``width`` pixels (``under``: a translation's font)."""
        whole = prefix + text
        layout = QTextLayout(whole, self._translation_font if under else self._font)
        layout.beginLayout()
        rows: list[Row] = []
        while True:
            tl = layout.createLine()
            if not tl.isValid():
                break
            tl.setLineWidth(width)
            start, length = tl.textStart(), tl.textLength()
            rows.append((whole[start:start + length], max(0, len(prefix) - start), label, under))
        layout.endLayout()
        return rows

    def _row_image(self, row: Row) -> QImage:
        """A row rendered once (outline stroke + fill), then only copied: repaints stay cheap."""
        hit = self._images.get(row)
        if hit is not None:
            self._images.move_to_end(row)
            return hit
        seg, lab_len, label, under = row
        font = self._translation_font if under else self._font
        fm = QFontMetricsF(font) if under else self._fm
        lab, rest = seg[:lab_len].rstrip(), seg[lab_len:]
        lab_sep = seg[len(lab):lab_len]
        pad = self._pad()
        base = QPointF(pad, pad + fm.ascent())
        pieces = [(base, lab, self.label_color(label))] if lab else []
        pieces.append((base + QPointF(fm.horizontalAdvance(lab + lab_sep), 0), rest,
                       self._text_color))
        dpr = self.devicePixelRatioF()
        # an italic glyph leans past its advance: room for the last one
        w = int(pad * 2 + fm.horizontalAdvance(seg) + (fm.height() / 4 if under else 0) + 1)
        h = int(pad * 2 + fm.height() + 1)
        img = QImage(int(w * dpr), int(h * dpr), QImage.Format.Format_ARGB32_Premultiplied)
        img.setDevicePixelRatio(dpr)
        img.fill(0)
        p = QPainter(img)
        p.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        p.setFont(font)
        if self._outline:  # the glyphs drawn dark all around, then on top: a cheap, even outline
            p.setPen(QColor(0, 0, 0, 235))
            steps = 8 if pad <= 3 else 16
            for k in range(steps):
                a = 2 * math.pi * k / steps
                off = QPointF(pad * math.cos(a), pad * math.sin(a))
                for at, text, _ in pieces:
                    p.drawText(at + off, text)
        for at, text, color in pieces:
            p.setPen(color)
            p.drawText(at, text)
        p.end()
        self._images[row] = img
        while len(self._images) > ROW_IMAGES:
            self._images.popitem(last=False)
        return img

    def _pad(self) -> float:
        return max(1.5, self.settings.font_size / 11)

    def _rows_that_fit(self) -> int:
        avail = self.height() - 2 * MARGIN_Y - self._hint_rect().height()
        return max(1, min(self.settings.lines * self._rows_per_line(),
                           int(avail // self.line_height())))

    def _caption_rows(self) -> int:
        """Rows left for captions: the state band takes the top one (with a single row, the
        band replaces rows that are not current and shares the row with current ones)."""
        n = self._rows_that_fit()
        if not self.status.text:
            return n
        if n > 1:
            return n - 1
        return 1 if self.status.rows_current else 0

    def _visible_rows(self, n: int) -> list[Row]:
        lines = list(self._lines.values())
        if not lines:
            return []
        prev: list[str | None] = [None, *(ln.stream_id for ln in lines[:-1])]
        out: list = []
        for line, p in zip(reversed(lines), reversed(prev), strict=True):
            out[:0] = self._rows_for(line, p)
            if len(out) >= n:
                break
        return out[-n:] if n else []

    # ---------------------------------------------------------------------- paint ----
    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        r = self.rect()
        if self._bg.alpha() > 0:
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(self._bg)
            p.drawRoundedRect(r, 10, 10)
        lh = self.line_height()
        n = self._caption_rows()
        rows = self._visible_rows(n)
        y = r.height() - MARGIN_Y - len(rows) * lh
        pad = self._pad()
        p.setOpacity(1.0 if self.status.rows_current else DIM_OPACITY)
        for row in rows:
            if self.show_labels:  # every row carries its speaker's colour, named or not
                p.fillRect(QRectF(6, y + lh * 0.15, 4, lh * 0.7), self.label_color(row[2]))
            p.drawImage(QPointF(MARGIN_X - pad, y - pad), self._row_image(row))
            y += lh
        p.setOpacity(1.0)
        hint = self._hint_rect()
        if self.status.text:
            self._paint_status(p, r, lh, small=n > 0 and n == self._rows_that_fit(),
                               top=hint.height())
        if self.keyboard_mode:
            p.setPen(QColor(self._text_color))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRoundedRect(QRectF(r).adjusted(1.5, 1.5, -1.5, -1.5), 10, 10)
        if self._hint:
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(QColor(0, 0, 0, 220))  # white words readable over any colour chosen
            p.drawRoundedRect(hint, 10, 10)
            p.setFont(self._hint_font())
            p.setPen(QColor("#ffffff"))
            p.drawText(hint.adjusted(MARGIN_X, 2, -MARGIN_X, 0), HINT_FLAGS, self._hint)
        p.end()
        self.paints += 1
        if self._pending:
            stamps, self._pending = self._pending, []
            if self.on_painted is not None:
                self.on_painted(stamps, time.time())

    def _paint_status(self, p: QPainter, r: QRect, lh: int, small: bool, top: float = 0) -> None:
        """The state band: the top row (a strip of its own, the text in the user's colour, a
        bar in the warning colour), or a small line above a single current row; ``top``: below
        the help of the moment."""
        font = QFont(self._font)
        if small:
            font.setPointSize(max(8, self.settings.font_size // 2))
        fm = QFontMetricsF(font)
        height = MARGIN_Y + (fm.lineSpacing() if small else lh)
        strip = QColor(self._bg)
        strip.setAlphaF(min(1.0, max(0.55, self._bg.alphaF() + 0.25)))
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(strip)
        p.drawRoundedRect(QRectF(0, 0, r.width(), top + height), 10, 10)  # from under the help
        p.fillRect(QRectF(6, top + MARGIN_Y, 4, height - MARGIN_Y),
                   QColor(LABEL_COLORS[0]))  # amber: this is about voxcap, not speech
        p.setFont(font)
        text = fm.elidedText(self.status.text, Qt.TextElideMode.ElideRight,
                             r.width() - 2 * MARGIN_X)
        at = QPointF(MARGIN_X, top + MARGIN_Y + fm.ascent())
        if self._outline:
            p.setPen(QColor(0, 0, 0, 235))
            for dx, dy in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                p.drawText(at + QPointF(dx, dy), text)
        p.setPen(self._text_color)
        p.drawText(at, text)

    def place_for_now(self, rect: QRect) -> None:
        """Moved by the app (stepping aside of a dialog), not by the user: nothing is saved
        (the window system reports the move later, so the place is remembered, not a moment)."""
        self.placed = QRect(rect)
        self.setGeometry(rect)

    def _moved_by_app(self) -> bool:
        return self.placed is not None and self.geometry() == self.placed

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self._drag is None and self.isVisible() and not self._moved_by_app():
            self._save_timer.start()

    def moveEvent(self, event) -> None:
        super().moveEvent(event)
        if self._drag is None and self.isVisible() and not self._moved_by_app():
            self._save_timer.start()

    def hideEvent(self, event) -> None:
        super().hideEvent(event)
        if self._save_timer.isActive():  # a move not saved yet: now, while the app still runs
            self._save_timer.stop()
            self.geometryChangedByUser.emit()

    # ---------------------------------------------------------------- click-through ----
    @property
    def click_through(self) -> bool:
        return self._click_through

    def set_click_through(self, on: bool) -> None:
        if on == self._click_through:
            return
        self._click_through = on
        visible, geom = self.isVisible(), self.geometry()
        # the attribute first: while it is set, Qt keeps the window flag on
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents, on)
        self.setWindowFlag(Qt.WindowType.WindowTransparentForInput, on)
        if visible:
            self.setGeometry(geom)
            self.show()
        if on:
            self._hint = HINT
            self._hint_timer.start()
        else:
            self._clear_hint()
        self.update()
        self.clickThroughChanged.emit(on)

    def _hint_font(self) -> QFont:
        small = QFont(self._font)
        small.setPointSize(max(9, self.settings.font_size // 3))
        small.setBold(False)
        return small

    def _hint_rect(self) -> QRectF:
        """The help's own strip at the top, its words wrapped (empty without help): the state
        band and the rows go below it, never under its words."""
        if not self._hint:
            return QRectF()
        width = max(1, self.width() - 2 * MARGIN_X)
        words = QFontMetricsF(self._hint_font()).boundingRect(
            QRectF(0, 0, width, 10_000), HINT_FLAGS, self._hint)
        return QRectF(0, 0, self.width(), words.height() + 4)

    def _clear_hint(self) -> None:
        self._hint = ""
        self.update()

    # --------------------------------------------------------------- move / resize ----
    def _edges_at(self, pos: QPoint) -> Qt.Edge:
        edges = Qt.Edge(0)
        if pos.x() <= EDGE:
            edges |= Qt.Edge.LeftEdge
        if pos.x() >= self.width() - EDGE:
            edges |= Qt.Edge.RightEdge
        if pos.y() <= EDGE:
            edges |= Qt.Edge.TopEdge
        if pos.y() >= self.height() - EDGE:
            edges |= Qt.Edge.BottomEdge
        return edges

    def mousePressEvent(self, event) -> None:
        if event.button() != Qt.MouseButton.LeftButton or self._click_through:
            return
        pos = event.position().toPoint()
        edges = self._edges_at(pos)
        if QGuiApplication.platformName() == "wayland" and self.windowHandle() is not None:
            handle = self.windowHandle()
            if _any(edges):
                handle.startSystemResize(edges)
            else:
                handle.startSystemMove()
            return
        self._drag = (edges, event.globalPosition().toPoint(), QRect(self.geometry()))

    def mouseMoveEvent(self, event) -> None:
        if self._drag is None:
            edges = self._edges_at(event.position().toPoint())
            self.setCursor(_cursor_for(edges))
            return
        edges, start, geom = self._drag
        d = event.globalPosition().toPoint() - start
        g = QRect(geom)
        if not _any(edges):
            g.moveTo(geom.topLeft() + d)
        else:
            if edges & Qt.Edge.LeftEdge:
                g.setLeft(min(geom.left() + d.x(), geom.right() - MIN_W))
            if edges & Qt.Edge.RightEdge:
                g.setRight(max(geom.right() + d.x(), geom.left() + MIN_W))
            if edges & Qt.Edge.TopEdge:
                g.setTop(min(geom.top() + d.y(), geom.bottom() - MIN_H))
            if edges & Qt.Edge.BottomEdge:
                g.setBottom(max(geom.bottom() + d.y(), geom.top() + MIN_H))
        self.setGeometry(g)

    def mouseReleaseEvent(self, event) -> None:
        if self._drag is not None:
            self._drag = None
            self.geometryChangedByUser.emit()

    def contextMenuEvent(self, event) -> None:
        menu = QMenu(self)
        ct = QAction("Click-through (mouse passes to the windows below)", menu, checkable=True)
        ct.setChecked(self._click_through)
        ct.toggled.connect(self.set_click_through)
        menu.addAction(ct)
        menu.addAction("Move or resize with the keyboard", self.start_keyboard_mode)
        menu.addAction("Settings…", self.settingsRequested.emit)
        menu.addAction("Hide captions overlay", self.hideRequested.emit)
        menu.exec(event.globalPos())

    def move_by_keyboard(self, dx: int, dy: int) -> None:
        self.move(self.pos() + QPointF(dx, dy).toPoint())
        self.geometryChangedByUser.emit()

    def resize_by_keyboard(self, dw: int, dh: int) -> None:
        self.resize(max(MIN_W, self.width() + dw), max(MIN_H, self.height() + dh))
        self.geometryChangedByUser.emit()

    def start_keyboard_mode(self) -> None:
        """Arrows move, Shift+arrows resize (Ctrl: finer), Enter or Esc done. The overlay takes
        the keyboard focus for it (and gives it back): it is a tool window that is otherwise
        never focused. Click-through is left as it is: keys pass no mouse."""
        self.keyboard_mode = True
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._hint = KEYBOARD_HINT
        self._hint_timer.stop()
        self.show()
        self.raise_()
        self.activateWindow()
        self.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.update()
        announce(self, KEYBOARD_HINT)

    def stop_keyboard_mode(self) -> None:
        if self.keyboard_mode:
            self.keyboard_mode = False
            self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            self._clear_hint()
            self.keyboardModeEnded.emit()

    def keyPressEvent(self, event) -> None:
        if not self.keyboard_mode:
            super().keyPressEvent(event)
            return
        key, mods = event.key(), event.modifiers()
        step = FINE_STEP if mods & Qt.KeyboardModifier.ControlModifier else KEY_STEP
        arrows = {Qt.Key.Key_Left: (-step, 0), Qt.Key.Key_Right: (step, 0),
                  Qt.Key.Key_Up: (0, -step), Qt.Key.Key_Down: (0, step)}
        if key in arrows:
            dx, dy = arrows[key]
            if mods & Qt.KeyboardModifier.ShiftModifier:
                self.resize_by_keyboard(dx, dy)
            else:
                self.move_by_keyboard(dx, dy)
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Escape):
            self.stop_keyboard_mode()
        else:
            super().keyPressEvent(event)

    def focusOutEvent(self, event) -> None:
        super().focusOutEvent(event)
        self.stop_keyboard_mode()  # the mode never outlives the focus: keys go elsewhere


def _any(edges) -> bool:
    return bool(edges.value if hasattr(edges, "value") else int(edges))


def _cursor_for(edges) -> Qt.CursorShape:
    left_right = edges & (Qt.Edge.LeftEdge | Qt.Edge.RightEdge)
    top_bottom = edges & (Qt.Edge.TopEdge | Qt.Edge.BottomEdge)
    if _any(left_right) and _any(top_bottom):
        diag = (edges & Qt.Edge.LeftEdge and edges & Qt.Edge.TopEdge) or \
               (edges & Qt.Edge.RightEdge and edges & Qt.Edge.BottomEdge)
        return Qt.CursorShape.SizeFDiagCursor if _any(diag) else Qt.CursorShape.SizeBDiagCursor
    if _any(left_right):
        return Qt.CursorShape.SizeHorCursor
    if _any(top_bottom):
        return Qt.CursorShape.SizeVerCursor
    return Qt.CursorShape.SizeAllCursor
