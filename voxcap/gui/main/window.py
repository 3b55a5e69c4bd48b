"""The main window: start/stop, source, overlay controls, engine status, the caption history
with search/copy/export, previous sessions, and the meter in a dock.

Everything is reachable from the keyboard: menus (Alt), mnemonics, and shortcuts (Help → Keyboard
shortcuts lists them). The window holds no logic of its own: its actions are connected by
``app.VoxcapApp``.
"""

from __future__ import annotations

import textwrap
import time

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence, QStandardItemModel
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ...events import Captioning
from ..a11y import announce, status_label
from ..settings.setting_words import for_the_app
from ..tab_keys import page_keys
from .day_search import DaySearch
from .engine_status import EngineStatus
from .history import HistoryView
from .input_levels import InputLevelBars
from .meter_panel import MeterWidget
from .search_bar import SearchBar
from .sessions_view import SessionsView
from .shortcut_list import shortcut_rows

SOURCES = (("System audio (what this computer plays)", "system"), ("Microphone", "mic"),
           ("Both: system audio and microphone", "both"))
SHORTCUT_WORDS = 40  # F1's second column, in characters: its rows stay within the box's width
REPEAT_ANNOUNCE_S = 15.0  # one cause's notices are announced at most this often
STATE_TEXT = {Captioning.OFF: "Not captioning", Captioning.STARTING: "Starting captioning…",
              Captioning.WAITING: "Waiting for the engine (audio is kept)…",
              Captioning.ON: "Captioning",
              Captioning.RESTARTING: "Engine restarting (audio is kept)…",
              Captioning.PAUSED: "Paused", Captioning.STOPPING: "Stopping…",
              Captioning.CLOSED: "Closed"}
ASKED_TEXT = {"pausing": "Pausing…", "resuming": "Resuming…"}  # F6, before the controller acts


def spoken_state(state: str, message: str) -> str:
    """The state and its message as one announcement, without the state's word said twice
    ("Paused: paused: nothing is captured…" -> "Paused: nothing is captured…")."""
    head, sep, rest = message.partition(": ")
    if sep and head.casefold() == state.rstrip("…").casefold():
        message = rest
    return f"{state}: {message}" if message else state


def source_words(key: str) -> str:
    """An application's source in words, also while the list lacks it (the application chosen
    plays nothing now); any other key as it is (a device's name)."""
    kind, _, name = key.partition(":")
    if name and kind == "app":
        return f"{name} (application)"
    if name and kind == "both":
        return f"Both: {name} and the microphone"
    return key


class MainWindow(QMainWindow):
    sourceChosen = Signal(str)
    closing = Signal()

    def __init__(self, sessions_root=None) -> None:
        super().__init__()
        # Qt appends the application display name: "Live captions — voxcap"
        self.setWindowTitle("Live captions")

        # -- actions -------------------------------------------------------------------
        def act(text, shortcut=None, checkable=False, tip=""):
            a = QAction(text, self)
            if shortcut:
                a.setShortcut(QKeySequence(shortcut))
                a.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
            a.setCheckable(checkable)
            if tip:
                a.setStatusTip(tip)
            self.addAction(a)
            return a

        self.act_start = act("&Start captioning", "F5")
        # a key of its own: F5 stays Start/Stop, so a person who stops with it never pauses
        self.act_pause = act("&Pause captioning", "F6",
                             tip="Pause: nothing is captured; the session and its captions stay")
        self.act_pause.setEnabled(False)
        self.act_export = act("&Export captions…", "Ctrl+E")
        self.act_copy = act("&Copy all captions", "Ctrl+Shift+C")
        self.act_find = act("&Find…", "Ctrl+F")
        self.act_quit = act("&Quit", "Ctrl+Q")
        self.act_overlay = act("Show captions &overlay", "Ctrl+L", checkable=True)
        self.act_click = act("Overlay &click-through", "Ctrl+T", checkable=True,
                             tip="The mouse passes through the overlay to the windows below")
        self.act_reset_overlay = act("&Reset overlay position", "Ctrl+Shift+R")
        self.act_meter = act("Throughput &meter", "Ctrl+M", checkable=True)
        self.act_settings = act("&Settings…", "Ctrl+,")
        self.act_tab_captions = act("Caption his&tory", "Ctrl+1")
        self.act_tab_sessions = act("&Previous sessions", "Ctrl+2")
        self.act_shortcuts = act("&Keyboard shortcuts", "F1")
        self.act_diagnostics = act("Copy &diagnostics (for a bug report)")

        mb = self.menuBar()
        m = mb.addMenu("&Captions")
        for a in (self.act_start, self.act_pause, None, self.act_find, self.act_copy,
                  self.act_export, None, self.act_quit):
            m.addSeparator() if a is None else m.addAction(a)
        m = mb.addMenu("&View")
        for a in (self.act_overlay, self.act_click, self.act_reset_overlay, None, self.act_meter,
                  self.act_tab_captions, self.act_tab_sessions):
            m.addSeparator() if a is None else m.addAction(a)
        mb.addMenu("&Settings").addAction(self.act_settings)
        help_menu = mb.addMenu("&Help")
        help_menu.addAction(self.act_shortcuts)
        help_menu.addAction(self.act_diagnostics)

        # -- top row ---------------------------------------------------------------------
        self.start_button = QPushButton("Start captioning (F5)", self)
        self.start_button.setAccessibleName("Start captioning")  # what pressing it does now
        self.start_button.setMinimumWidth(200)
        self.pause_button = QPushButton("Pause (F6)", self)
        self.pause_button.setAccessibleName("Pause captioning")
        self.pause_button.setEnabled(False)
        self.source = QComboBox(self)
        self.source.setAccessibleName("Audio source")
        self.source.setMinimumContentsLength(28)
        for text, key in SOURCES:
            self.source.addItem(text, key)
        source_label = QLabel("S&ource:", self)
        source_label.setBuddy(self.source)
        self.overlay_button = QPushButton("Overlay", self)
        self.overlay_button.setCheckable(True)
        self.overlay_button.setAccessibleName("Show captions overlay")
        self.click_button = QPushButton("Click-through", self)
        self.click_button.setCheckable(True)
        self.click_button.setAccessibleName("Overlay click-through")
        self.settings_button = QPushButton("Settings…", self)
        top = QHBoxLayout()
        top.addWidget(self.start_button)
        top.addWidget(self.pause_button)
        top.addWidget(source_label)
        top.addWidget(self.source, 1)
        top.addWidget(self.overlay_button)
        top.addWidget(self.click_button)
        top.addWidget(self.settings_button)

        self._state: tuple[Captioning, str, str] = (Captioning.OFF, "", "")  # set_state's
        self.state_label = status_label(QLabel(STATE_TEXT[Captioning.OFF], self), "Captioning state")
        self.engine_status = EngineStatus(self)
        self.sharing = status_label(QLabel("", self), "Caption sharing")
        self.sharing.setToolTip("Captions are shared through a page and a feed (Settings → "
                                "Share captions)")
        self.sharing.hide()
        self.notice = status_label(QLabel("", self), "Latest notice")
        self.notice_cause = ""  # what the notice is about; cleared when that is resolved
        self._announced: dict[str, float] = {}  # cause -> when a notice about it was announced
        # the overlay: it says the notices while this window is hidden (to the tray), as a
        # screen reader may not voice a hidden window
        self.hidden_voice: QWidget | None = None
        self.notice.setWordWrap(True)
        self._notice_expiry = QTimer(self, singleShot=True)  # the shown notice's, if it has one
        self._notice_expiry.timeout.connect(lambda: self.clear_notice(self.notice_cause)
                                            if self.notice_cause else self.notice.setText(""))
        self.notice.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        # -- tabs ------------------------------------------------------------------------
        self.history = HistoryView(self)
        self.search = SearchBar(self.history, self)
        self.copy_button = QPushButton("Copy a&ll", self)
        self.export_button = QPushButton("E&xport…", self)
        hist_buttons = QHBoxLayout()
        hist_buttons.addWidget(self.search, 1)
        hist_buttons.addWidget(self.copy_button)
        hist_buttons.addWidget(self.export_button)
        live = QWidget(self)
        ll = QVBoxLayout(live)
        ll.addLayout(hist_buttons)
        self.day_search = DaySearch(sessions_root, self)
        ll.addWidget(self.day_search)
        ll.addWidget(self.history, 1)
        self.sessions = SessionsView(sessions_root, self)
        self.tabs = QTabWidget(self)
        # Alt+H is the Help menu's, Alt+P this second tab's
        self.tabs.addTab(live, "Caption his&tory")
        self.tabs.addTab(self.sessions, "&Previous sessions")
        # however the tab is reached (Alt+P, a click, Ctrl+2): the sessions on disk now, also
        # those of an earlier run of the app
        self.tabs.currentChanged.connect(self._tab_shown)
        page_keys(self.tabs, self)

        central = QWidget(self)
        cl = QVBoxLayout(central)
        cl.addLayout(top)
        status_row = QHBoxLayout()
        status_row.addWidget(self.state_label)
        status_row.addWidget(self.engine_status, 1)
        status_row.addWidget(self.sharing, 0, Qt.AlignmentFlag.AlignTop)
        cl.addLayout(status_row)
        self.levels = InputLevelBars(parent=self)  # shown while audio is captured
        cl.addWidget(self.levels)
        cl.addWidget(self.notice)
        cl.addWidget(self.tabs, 1)
        self.setCentralWidget(central)

        self.meter = MeterWidget(self)
        scroll = QScrollArea(self)
        scroll.setWidget(self.meter)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setAccessibleName("Throughput meter")  # a tab stop (arrows scroll it): named
        self.meter.setMinimumWidth(220)  # narrower (a small screen): its rows wrap
        self.meter_dock = QDockWidget("Throughput meter", self)
        self.meter_dock.setObjectName("meter")
        self.meter_dock.setWidget(scroll)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.meter_dock)
        # the dock's close button unticks the action; the window being hidden does not
        self.meter_dock.visibilityChanged.connect(self._meter_dock_shown)
        self.act_meter.toggled.connect(self.meter_dock.setVisible)

        # -- wiring inside the window ----------------------------------------------------
        self.start_button.clicked.connect(self.act_start.trigger)
        self.pause_button.clicked.connect(self.act_pause.trigger)
        self.export_button.clicked.connect(self.act_export.trigger)
        self.copy_button.clicked.connect(self.act_copy.trigger)
        self.settings_button.clicked.connect(self.act_settings.trigger)
        self.overlay_button.toggled.connect(self.act_overlay.setChecked)
        self.act_overlay.toggled.connect(self.overlay_button.setChecked)
        self.click_button.toggled.connect(self.act_click.setChecked)
        self.act_click.toggled.connect(self.click_button.setChecked)
        self.act_find.triggered.connect(self._find)
        self.search.searched.connect(self.day_search.search)
        self.day_search.hitChosen.connect(self.show_hit)
        self.act_tab_captions.triggered.connect(lambda: self.tabs.setCurrentIndex(0))
        self.act_tab_sessions.triggered.connect(self._show_sessions)
        self.act_shortcuts.triggered.connect(self.show_shortcuts)
        self.source.activated.connect(lambda _i: self.sourceChosen.emit(self.source.currentData()))
        self.resize(1180, 660)
        self.resizeDocks([self.meter_dock], [420], Qt.Orientation.Horizontal)

    # ------------------------------------------------------------------------------------
    def _meter_dock_shown(self, visible: bool) -> None:
        """A method, not a lambda: Qt drops the connection with the window (a dock hidden as
        the window is deleted found it gone)."""
        if self.isVisible():
            self.act_meter.setChecked(visible)

    def _find(self) -> None:
        self.tabs.setCurrentIndex(0)
        self.search.focus()

    def _show_sessions(self) -> None:
        if self.tabs.currentIndex() == 1:
            self.sessions.refresh()  # already there: no tab change refreshes it
        self.tabs.setCurrentIndex(1)
        self.sessions.list.setFocus()

    def show_session(self, session_id: str) -> None:
        """A session in Previous sessions."""
        self.tabs.setCurrentIndex(1)
        self.sessions.select(session_id)
        self.sessions.list.setFocus()

    def show_hit(self, hit, nth: int = 0) -> None:
        """A hit in an earlier session (``captions.search.SearchHit``; the ``nth`` place of its
        words there): that session in Previous sessions, at the match, highlighted."""
        self.show_session(hit.session_id)
        self.sessions.show_match(hit, nth)

    def set_state(self, state: Captioning, message: str = "", detail: str = "") -> None:
        """``detail``: stays next to the state while it lasts (e.g. "Them only" when a half of
        "Both" could not start), unlike notices, which the next one replaces."""
        active = state.active
        self._state = (state, "", detail)  # shown again after a refused pause
        text = STATE_TEXT[state] + (f" ({detail})" if detail else "")
        changed = text != self.state_label.text()
        self.state_label.setText(text)
        label = "Stop captioning" if active else "Start captioning"
        self.start_button.setText(f"{label} (F5)")
        self.start_button.setAccessibleName(label)
        self.act_start.setText("&Stop captioning" if active else "&Start captioning")
        self.start_button.setEnabled(state != Captioning.STOPPING)
        paused = state == Captioning.PAUSED
        self.act_pause.setEnabled(active)
        self.act_pause.setText("&Resume captioning" if paused else "&Pause captioning")
        self.pause_button.setEnabled(active)
        self.pause_button.setText("Resume (F6)" if paused else "Pause (F6)")
        self.pause_button.setAccessibleName("Resume captioning" if paused else "Pause captioning")
        if message:  # spoken with the state below: once
            self.show_notice(message, cause="captioning", spoken=False)
        elif changed:  # "waiting for the engine…" is over once captioning is on
            self.clear_notice("captioning")
        # hidden: the overlay says it; a restart: the engine status has said it, with its reason
        if changed and self.isVisible() and state != Captioning.RESTARTING:
            announce(self.state_label, spoken_state(text, message))

    def set_asked(self, what: str) -> None:
        """``what``: "pausing" or "resuming", said at once; "": the request was refused (a
        file cannot be paused), the state as it is again."""
        if not what:
            if self.state_label.text() in ASKED_TEXT.values():
                self.set_state(*self._state)
            return
        self.state_label.setText(ASKED_TEXT[what])
        if self.isVisible():
            announce(self.state_label, ASKED_TEXT[what])

    def set_sharing(self, running: bool, viewers: int, lan: bool) -> None:
        """"Sharing: 2 viewers" while the caption page and feed are served; said when sharing
        starts or stops (the count follows in the label's name, not spoken each time)."""
        text = (f"Sharing: {viewers} viewer{'s' if viewers != 1 else ''}"
                + (" (network)" if lan else "")) if running else ""
        if text == self.sharing.text():
            return
        was = self.sharing.isVisible() or bool(self.sharing.text())
        self.sharing.setText(text)
        self.sharing.setVisible(running)
        if running != was:
            announce(self.sharing, text or "Sharing stopped")

    def show_notice(self, text: str, fix: str = "", cause: str = "",
                    assertive: bool = False, spoken: bool = True, lifetime_s: float = 0.0) -> None:
        """Show (and announce) a notice; ``cause`` lets ``clear_notice`` remove it once the
        cause is gone; ``spoken`` False: said elsewhere already; ``lifetime_s``: stale news,
        gone after it (0: stays until replaced or its cause is gone). Said by the notice line,
        or by ``hidden_voice`` while this window is hidden: once, by a window on the screen."""
        full = for_the_app(text + (f" — {fix}" if fix else ""))  # the core writes for the terminal
        self.notice.setText(full)
        self.notice_cause = cause
        self._notice_expiry.stop()
        if lifetime_s > 0:
            self._notice_expiry.start(int(lifetime_s * 1000))
        now = time.monotonic()
        # a repeating notice (audio lost again, a growing total) is spoken once in a while, not
        # each time; errors (assertive) always
        if not spoken:
            return
        if assertive or not cause or now - self._announced.get(cause, -1e9) >= REPEAT_ANNOUNCE_S:
            self._announced[cause] = now
            voice = self.hidden_voice
            if self.isVisible() or voice is None or not voice.isVisible():
                voice = self.notice
            announce(voice, full, assertive)

    def clear_notice(self, *causes: str) -> None:
        """Remove the notice if it is about one of ``causes`` (its cause is gone)."""
        if self.notice_cause and self.notice_cause in causes:
            self.notice.setText("")
            self.notice_cause = ""

    def set_source(self, key: str) -> None:
        i = self.source.findData(key)
        if i < 0:  # a device that is not listed (yet): keep it selectable
            self.source.addItem(source_words(key), key)
            i = self.source.count() - 1
        self.source.setCurrentIndex(i)

    def set_devices(self, devices) -> None:
        """The sound server's devices, after the three fixed choices; the selection stays.
        Devices sharing a description are listed with their server name, and chosen by it."""
        current = self.source.currentData()
        self._devices = devices
        while self.source.count() > len(SOURCES):
            self.source.removeItem(self.source.count() - 1)
        if devices:
            self.source.insertSeparator(self.source.count())
        seen = [d.description for d in devices]
        for d in devices:
            if d.name.startswith("voxcap_ec_"):  # our own echo canceller's, while captioning
                continue
            kind = "system audio" if d.is_monitor else "input"
            if seen.count(d.description) > 1:  # two sinks of one make: told apart by server name
                self.source.addItem(f"{d.description} ({kind}: {d.name})", d.name)
            else:
                self.source.addItem(f"{d.description} ({kind})", d.description)
        apps = getattr(self, "_apps", ())
        if apps:
            self.source.insertSeparator(self.source.count())
        for a in apps:  # only that application's sound; or it ("Them") with the microphone ("You")
            self.source.addItem(f"{a.title} (application)", f"app:{a.name}")
            self.source.addItem(source_words(f"both:{a.name}"), f"both:{a.name}")
        self.set_source(current)
        self._offer_microphone(any(not d.is_monitor for d in devices))

    def _tab_shown(self, index: int) -> None:
        if self.tabs.widget(index) is self.sessions:
            self.sessions.refresh()

    def _offer_microphone(self, found: bool) -> None:
        """The choices that need a microphone are unavailable (and say why) while the sound
        server has none."""
        why = "" if found else "No microphone found: plug one in (the list follows)"
        model = self.source.model()
        assert isinstance(model, QStandardItemModel)  # a QComboBox's own
        for i in range(self.source.count()):
            key = self.source.itemData(i) or ""
            if key in ("mic", "both") or key.startswith("both:"):
                model.item(i).setEnabled(found)
                self.source.setItemData(i, why or None, Qt.ItemDataRole.ToolTipRole)

    def set_apps(self, apps) -> None:
        """The applications playing sound, listed after the devices; the selection stays."""
        self._apps = tuple(apps)
        self.set_devices(getattr(self, "_devices", ()))

    def show_shortcuts(self) -> None:
        rows = shortcut_rows(self)
        width = max(len(keys) for keys, _ in rows)
        # wrapped here, under its own column: the box would wrap a long row back to the keys'
        text = "\n".join(textwrap.fill(what, width + 2 + SHORTCUT_WORDS,
                                       initial_indent=f"{keys:<{width}}  ",
                                       subsequent_indent=" " * (width + 2)) for keys, what in rows)
        box = QMessageBox(QMessageBox.Icon.Information, "Keyboard shortcuts", text,
                          QMessageBox.StandardButton.Ok, self)
        box.setStyleSheet("QLabel { font-family: monospace; }")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByKeyboard
                                    | Qt.TextInteractionFlag.TextSelectableByMouse)
        box.open()  # not exec(): the GUI thread goes on serving the captions behind it

    def showEvent(self, event) -> None:
        self.fit_screen()
        super().showEvent(event)

    def fit_screen(self) -> None:
        """No larger than the screen's free area (the default size, or one restored from a
        bigger screen): on a small screen the end of the status line was past its edge."""
        screen = self.screen()
        if screen is None or self.isMaximized() or self.isFullScreen():
            return
        free = screen.availableGeometry()
        extra = self.frameGeometry().size() - self.geometry().size()  # the title bar, borders
        width = min(self.width(), free.width() - extra.width())
        height = min(self.height(), free.height() - extra.height())
        if (width, height) != (self.width(), self.height()):
            self.resize(width, height)

    def closeEvent(self, event) -> None:
        event.ignore()  # the app decides (``VoxcapApp.close_requested``): quit, ask, or hide
        self.closing.emit()

    def ask_quit(self, on_quit) -> QMessageBox:
        """× while captioning: quitting would end the captions at once, so ask first (not
        modal to the app: the captions go on behind the question). ``on_quit`` if confirmed."""
        box = QMessageBox(QMessageBox.Icon.Question, "Quit voxcap?",
                          "Captioning is on. Quitting stops it and closes the overlay; the "
                          "captions so far are kept in Previous sessions.", parent=self)
        quit_button = box.addButton("&Quit voxcap", QMessageBox.ButtonRole.AcceptRole)
        keep = box.addButton("&Keep captioning", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(keep)
        box.setEscapeButton(keep)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.finished.connect(lambda _r: on_quit() if box.clickedButton() is quit_button else None)
        box.open()
        return box
