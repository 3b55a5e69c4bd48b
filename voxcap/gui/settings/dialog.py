"""The settings panel. Edits a copy of ``AppSettings``; ``applied`` hands the new settings to
the app (which restarts the engine if an engine setting changed, and saves them).

One file per part: ``settings_engine`` (Engine), ``settings_captions`` (Captions and start-up),
``settings_overlay`` (Caption overlay), ``share_panel`` (the Share captions tab), ``word_list_page``
(the Word list tab: a file of its own, saved on Apply), ``translation_page`` (the Translation
tab); their widgets
are made from the settings' declarations (``settings_fields``)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QApplication,
    QBoxLayout,
    QDialog,
    QDialogButtonBox,
    QFrame,
    QHBoxLayout,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ...app.settings import AppSettings
from ..a11y import announce
from ..share.panel import SharePanel
from ..tab_keys import page_keys
from .captions_page import CaptionsPanel
from .engine_page import EnginePanel
from .fields import point_buddies_at_fields
from .overlay_page import OverlayPanel
from .translation_page import TranslationPanel
from .word_list_page import WordListPanel


class SettingsDialog(QDialog):
    applied = Signal(object)  # AppSettings
    word_list_saved = Signal(list)  # the terms, once Settings → Word list saved them

    def __init__(self, settings: AppSettings, parent=None, cuda: bool = True) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")  # Qt appends " — voxcap"
        self.setAccessibleName("Settings")
        self.base = settings.copy()
        self.engine_panel = EnginePanel(self.base, self, cuda=cuda)
        self.captions_panel = CaptionsPanel(self.base, self)
        self.overlay_panel = OverlayPanel(self.base.overlay, self)
        self.share = SharePanel(self.base.share, self)
        self.word_list = WordListPanel(self.base, self)
        self.translation = TranslationPanel(self.base.translation, self)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel
                                        | QDialogButtonBox.StandardButton.Apply, self)
        general = QWidget(self)
        gen = QVBoxLayout(general)
        gen.addWidget(self.engine_panel)
        cols = self.columns = QHBoxLayout()  # one above the other on a narrow screen
        cols.addWidget(self.captions_panel)
        cols.addWidget(self.overlay_panel)
        gen.addLayout(cols)
        gen.addStretch(1)  # a screen taller than the page: the room below it, not between lines
        share_page = QWidget(self)
        sh = QVBoxLayout(share_page)
        sh.addWidget(self.share)
        sh.addStretch(1)
        self.tabs = QTabWidget(self)  # the dialog stays short enough for a 768-pixel screen
        self.pages: dict[QWidget, WholePage] = {}  # a tab's panel -> its page, scrolling where short
        for panel, page, title in ((self.engine_panel, general, "Engine, captions, overlay"),
                                   (self.share, share_page, "Share captions"),
                                   (self.word_list, self.word_list, "Word list"),
                                   (self.translation, self.translation, "Translation")):
            self.pages[panel] = WholePage(page, self)
            self.tabs.addTab(self.pages[panel], title)
        self.general_page = self.pages[self.engine_panel]
        lay = QVBoxLayout(self)
        lay.addWidget(self.tabs)
        lay.addWidget(self.buttons)
        page_keys(self.tabs, self)

        self.buttons.accepted.connect(self._ok)
        self.buttons.rejected.connect(self.reject)
        apply_button = self.buttons.button(QDialogButtonBox.StandardButton.Apply)
        apply_button.clicked.connect(self.apply)
        apply_button.setText("&Apply")
        for form in (self.engine_panel.form, self.overlay_panel.form):
            point_buddies_at_fields(form)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        QTimer.singleShot(0, self, self.fit_screen)  # once laid out at its width

    def fit_screen(self) -> None:
        """Each whole page where the screen allows, else as tall as the screen with the longer
        pages scrolling (a large font); Qt opens a dialog at most two thirds of the screen."""
        screen, page = self.screen(), self.general_page
        if screen is None:
            return
        chrome = self.size() - page.viewport().size()  # the tabs, the buttons, the margins
        free = screen.availableGeometry()
        room = free.size() - (self.frameGeometry().size() - self.size())  # less the title bar
        bar = page.verticalScrollBar().sizeHint().width()

        def need() -> QSize:  # with room for the scroll bar where the pages scroll
            size = self._pages_need() + chrome
            return size + QSize(bar if size.height() > room.height() else 0, 0)
        self.columns.setDirection(QBoxLayout.Direction.LeftToRight)
        if need().width() > room.width():  # a large font on a narrow screen: no sideways scrolling
            self.columns.setDirection(QBoxLayout.Direction.TopToBottom)
        self.resize(need().boundedTo(room))
        frame = self.frameGeometry()
        self.move(max(free.left(), min(frame.left(), free.right() - frame.width() + 1)),
                  max(free.top(), min(frame.top(), free.bottom() - frame.height() + 1)))

    def _pages_need(self) -> QSize:
        """The size every tab's page needs, all its lines shown."""
        hints = [inner.minimumSizeHint() for p in self.pages.values()
                 if (inner := p.widget()) is not None]
        return QSize(max(h.width() for h in hints), max(h.height() for h in hints))

    def show_tab(self, panel: QWidget) -> None:
        """The tab of ``panel`` (``share``, ``word_list``, ``translation``...) in front."""
        self.tabs.setCurrentWidget(self.pages[panel])

    def result_settings(self) -> AppSettings:
        s = self.base.copy()
        self.engine_panel.result_into(s)
        self.captions_panel.result_into(s)
        self.overlay_panel.result_into(s.overlay)
        s.share = self.share.result()
        self.translation.result_into(s.translation)
        return s

    def apply(self) -> bool:
        """Apply the settings; False (nothing applied) while "Allow site" is not one site:
        the Share tab shows its line and the field gets the focus."""
        problem = self.share.origin_error()
        if problem:
            self.show_tab(self.share)
            self.share.origin.setFocus()
            announce(self.share.origin_problem, "Problem: " + problem, assertive=True)
            return False
        if self.word_list.changed():
            if self.word_list.save():  # the panel says what went wrong
                self.show_tab(self.word_list)
                return False
            self.word_list_saved.emit(self.word_list.saved)
        new = self.result_settings()
        self.applied.emit(new)
        self.base = new.copy()
        return True

    def _ok(self) -> None:
        if self.apply():
            self.accept()


class WholePage(QScrollArea):
    """Each tab's page, as tall as its lines need at its width (a QFormLayout's own height for a
    width counts wrapped notes at their narrower preferred width): all of it where the screen
    allows, scrolling where it is shorter. The field with the focus is scrolled to, however it got
    it; the area itself is no stop."""

    def __init__(self, page: QWidget, parent=None) -> None:
        super().__init__(parent)
        self.setWidget(page)  # not resizable by the area: sized here, by its lines
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        page.installEventFilter(self)
        # Tab from the tab bar or OK, and a label's Alt+letter, reach a field from outside the
        # area, which scrolls only to fields reached from one of its own
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._follow_focus)

    def _follow_focus(self, _old: QWidget | None, new: QWidget | None) -> None:
        page = self.widget()
        if new is not None and page is not None and page.isAncestorOf(new):
            self.ensureWidgetVisible(new)

    def eventFilter(self, watched, event) -> bool:
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            QTimer.singleShot(0, self, self.fit_page)  # its lines changed (a note, a width)
        return super().eventFilter(watched, event)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.fit_page()

    def fit_page(self) -> None:
        page, view = self.widget(), self.viewport()
        if page is None:
            return
        need = page.minimumSizeHint()
        width = max(view.width(), need.width())
        lay = page.layout()
        if lay is not None and lay.hasHeightForWidth():  # wrapped lines at this width, else cut
            need.setHeight(max(need.height(), lay.totalMinimumHeightForWidth(width)))
        size = QSize(width, max(view.height(), need.height()))
        if size != page.size():
            page.resize(size)
            self.updateGeometry()

    def sizeHint(self) -> QSize:
        page = self.widget()
        return page.minimumSizeHint() if page is not None else super().sizeHint()

