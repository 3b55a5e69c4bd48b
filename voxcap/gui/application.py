"""The app: the windows, the session controller, and the routing of its events between them.

Threads: the GUI thread never waits on the engine. Engine start, restart and shutdown, stream
open/close, capture start/stop and journal writes run on the controller's threads
(``voxcap.app.controller``); their events come back through ``EventBridge`` as one queued
signal, handled here on the GUI thread (one handler per event type): caption assembly
(``CaptionAssembler``), then the overlay and the history.

Measurements taken here (shown by the meter, reported by ``benchmarks/gui_bench.py``):
``paint_lag``: delta leaves the engine (``TextDelta.produced_at``) -> the overlay painted the
update it caused; ``caption_lag``: audio captured -> on screen (definition in ``voxcap.app.lag``).
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable

from PySide6.QtCore import QByteArray, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from .. import logs
from ..app.controller import QUIT_ENGINE_WAIT_S, SessionController
from ..app.diagnostics import DiagnosticsReady, diagnostics_text
from ..app.glossary_file import read_terms
from ..app.lag import RecentValues
from ..app.line_translation import attach as attach_line_translation
from ..app.line_translation import line_key
from ..app.meter import MeterSampler
from ..app.notices import notice_for
from ..app.settings import AppSettings, RunOverrides, describe_change, load_settings
from ..app.settings_changes import SettingsChange, SettingsChanges
from ..app.start_times import StartTimes
from ..app.window_state import WindowState, load_window_state, save_window_state
from ..captions.assembly import CaptionAssembler
from ..captions.glossary import Glossary
from ..captions.masking import make_masker
from ..errors import ConfigError, VoxcapError
from ..eventhub import EventHub
from ..events import (
    AppProblem,
    AppsChanged,
    Captioning,
    CaptioningAsked,
    CaptioningState,
    CaptureDeviceChanged,
    CaptureRecovered,
    CaptureStarted,
    DevicesChanged,
    EngineFailed,
    EngineProgress,
    EngineReady,
    EngineRestarting,
    EngineStopped,
    LineTranslated,
    StreamFinished,
    StreamOpened,
    TextDelta,
)
from ..quit_signals import leave_at_once
from .bridge import EventBridge
from .global_shortcuts import GlobalShortcuts
from .icons import app_icon
from .main.export_controller import ExportController
from .main.window import MainWindow
from .overlay.linger import OverlayLinger
from .overlay.placement import OverlayPlacement, prepare_platform
from .overlay.state_band import OverlayState
from .overlay.window import CaptionOverlay, place_overlay
from .settings.controller import SettingsController
from .settings.setting_words import error_for_the_app
from .share.controller import SharingController
from .translation_offer import TranslationOffer
from .tray import Tray, tray_available

log = logging.getLogger(__name__)
LINE_COLUMNS = 160  # assembler lines; the overlay wraps them to its width, the history joins them
# the overlay's settings that change the height it needs
OVERLAY_HEIGHT = ("overlay.lines", "overlay.font_size", "overlay.font_family", "overlay.bold",
                  "translation")  # "both": two rows a line


def engine_settings(settings: AppSettings):
    """The engine ``settings`` ask for, as the app runs it: a vLLM server that is not there yet
    is waited for, so starting it later works without a restart here."""
    return settings.engine_settings(wait_for_server=True)


def screens_info() -> tuple[list, int]:
    screens = QApplication.screens()
    primary = QApplication.primaryScreen()
    info = [(s.name(), s.availableGeometry().getRect()) for s in screens]
    return info, screens.index(primary) if primary in screens else 0


class VoxcapApp(QObject):
    """The windows, the session controller and the routing of its events between them; sharing,
    export and the settings dialogs are controllers of their own (``sharing``, ``exports``,
    ``settings_control``). Applied settings are announced through ``settings_changes``: each
    part follows the settings it uses. Where the windows are is ``window_state``."""

    def __init__(self, settings: AppSettings | None = None, settings_problem: str | None = None, *,
                 controller_factory=None, sessions_root=None, persist: bool = True,
                 use_tray: bool = True, first_run: bool = True, overlay_path=None,
                 overrides: RunOverrides | None = None, engine_verbose: bool = False,
                 window_state: WindowState | None = None) -> None:
        super().__init__()
        self.settings_problem = settings_problem
        self.persist = persist
        self.window_state = window_state or WindowState()
        self.window = MainWindow(sessions_root)
        self.window.setWindowIcon(app_icon())
        self.settings_changes = SettingsChanges()
        self.settings_control = SettingsController(
            settings or AppSettings(), self.window, persist=persist, overrides=overrides,
            first_run=first_run, on_applied=self.settings_changes.announce,
            on_new_address=lambda: self.sharing.new_address(),
            on_word_list=lambda terms: self.controller.set_glossary(Glossary(terms)),
            on_models_changed=self._translation_models_changed)
        self.bridge = EventBridge(self)
        # the controller's events: to the GUI thread, and to sharing (which, started later,
        # learns whether captioning is on from the latest CaptioningState)
        self.hub = EventHub(keep_latest=(CaptioningState,))
        self.hub.subscribe(self.bridge.post)
        factory = controller_factory or (lambda publish: SessionController(
            publish, journal_root=sessions_root, verbose=engine_verbose))
        self.controller = factory(self.hub.publish)
        self._load_word_list()
        self._watch_captions()
        self.settings_changes.subscribe(self._watch_captions, "no_captions_after_s",
                                        "fresh_session_after_s", "no_sound_after_s")
        # each finished line's language and translation: journalled, so exports have them
        self.line_translation = attach_line_translation(
            self.controller, self.hub, self.settings_changes, self.settings.translation.translate_to,
            width=LINE_COLUMNS)
        self.translation_offer = TranslationOffer(
            self.hub, self.settings_changes, lambda: self.settings, self.window,
            on_installed=lambda: self._translation_models_changed(True))
        self.exports = ExportController(self.window, self.controller, sessions_root,
                                        masker=lambda: make_masker(self.settings.mask_profanity))
        self.sharing = SharingController(
            self.hub, self.window, settings=lambda: self.settings, state=self.window_state,
            save_state=self.save_state, changes=self.settings_changes,
            session_source=self.exports.current_session,
            share_panel=self.settings_control.share_panel)
        self.caption_lag = RecentValues()
        self.paint_lag = RecentValues()
        self.sampler = MeterSampler(self.controller, self.caption_lag, self.paint_lag)
        self.start_times = StartTimes(persist=persist)
        self.state = Captioning.OFF
        self._captioning_source = ""  # what the running (or last) captioning was started with
        self.labels: dict[str, str] = {}
        self.deltas_seen = 0
        self._quitting = False
        self._said_hidden = False  # "still captioning" from the tray, said once
        self._quit_question: QMessageBox | None = None
        self._new_session()
        self._handlers = self._event_handlers()

        self.window.history.time_of = self._line_wall_time
        self.window.levels.read = getattr(self.controller, "input_levels", dict)
        self.window.day_search.current_session = lambda: self.controller.session_id
        self.window.day_search.masker = self.window.sessions.masker = self.exports.masker
        self.overlay = CaptionOverlay(self.settings.overlay)
        self.overlay.set_translation_shown(self.settings.translation.shown())
        self.overlay.setWindowIcon(app_icon())
        self.overlay.on_painted = self._painted
        self.overlay.set_click_through(self.window_state.overlay.click_through)
        self.overlay_linger = OverlayLinger(self.overlay)  # the last rows after Stop, then clear
        self.placement = OverlayPlacement(self.overlay, overlay_path)  # on top: X11/layer-shell
        self.placement.menuRequested.connect(self.show_window)
        self.placement.outputsChanged.connect(self.place_overlay)
        self.shortcuts = GlobalShortcuts(self.placement.path, self)
        self.shortcuts.activated.connect(self.handle_message)
        for act in (self.window.act_overlay, self.window.act_start):  # where users look for keys
            act.setToolTip(f"{act.toolTip()} — global shortcuts: {self.shortcuts.summary}"
                           + (f"; {self.shortcuts.fix}" if self.shortcuts.fix else ""))
        self.tray: Tray | None = None
        if use_tray and tray_available():
            show = self.window.addAction("Show voxcap window")
            show.triggered.connect(self.show_window)
            w = self.window
            self.tray = Tray(app_icon(), [w.act_start, w.act_overlay, w.act_click, None, show,
                                          w.act_settings, None, w.act_quit], self)
            self.tray.activated.connect(lambda _r: self.show_window())
            self.tray.show()
        self.meter_timer = QTimer(self, interval=1000)
        self.meter_timer.timeout.connect(self.tick)
        self._wire()
        self._follow_settings()
        self.overlay_state = OverlayState(self)  # after _wire: the app's handlers run first

    def _watch_captions(self, _change=None) -> None:
        self.controller.watch_captions(self.settings.no_captions_after_s,
                                       self.settings.fresh_session_after_s)
        self.controller.silence_after_s = self.settings.no_sound_after_s

    @property
    def settings(self) -> AppSettings:
        return self.settings_control.settings

    # ------------------------------------------------------------------------- set-up ----
    def _wire(self) -> None:
        w = self.window
        self.bridge.events.connect(self.on_event)
        w.act_start.triggered.connect(self.toggle_captioning)
        w.engine_status.retryRequested.connect(self.retry_engine)
        w.act_diagnostics.triggered.connect(self.copy_diagnostics)
        w.act_quit.triggered.connect(self.quit)
        w.closing.connect(self.close_requested)
        w.act_pause.triggered.connect(self.toggle_pause)
        w.act_overlay.toggled.connect(self.set_overlay_visible)
        w.act_click.toggled.connect(self.overlay.set_click_through)
        self.overlay.clickThroughChanged.connect(self._click_through_changed)
        self.overlay.geometryChangedByUser.connect(self.save_overlay_geometry)
        self.overlay.hideRequested.connect(lambda: w.act_overlay.setChecked(False))
        self.overlay.settingsRequested.connect(self.open_settings)
        w.act_reset_overlay.triggered.connect(self.reset_overlay)
        w.act_settings.triggered.connect(self.open_settings)
        w.act_export.triggered.connect(self.exports.export_current)
        w.act_copy.triggered.connect(self.copy_all)
        w.act_meter.toggled.connect(self._meter_toggled)
        w.sourceChosen.connect(self.choose_source)
        w.sessions.exportRequested.connect(self.exports.export_session)

    def start(self) -> None:
        """Show the windows and start the engine (or the first-run dialog). Returns at once."""
        s, state = self.settings, self.window_state
        w = self.window
        if state.window_geometry:
            w.restoreGeometry(QByteArray.fromHex(state.window_geometry.encode()))
        w.set_source(s.source)
        w.act_meter.setChecked(state.show_meter)
        w.meter_dock.setVisible(state.show_meter)
        self.place_overlay()
        w.act_click.setChecked(self.overlay.click_through)
        w.act_overlay.setChecked(state.overlay.visible)
        self.overlay.setVisible(state.overlay.visible)
        if s.start_minimized:
            if self.tray is None:
                w.showMinimized()
        else:
            w.show()
        if self.settings_problem:
            w.show_notice(self.settings_problem)
        elif self.placement.message:
            w.show_notice(*self.placement.message)
        elif not self.shortcuts.available and self.placement.path.on_top:
            w.show_notice(f"Global shortcuts: {self.shortcuts.summary}.", self.shortcuts.fix)
        self.meter_timer.start()
        self.sharing.apply()
        self.tick()
        self.controller.watch_devices()
        if s.configured:
            self.start_engine()
            if s.start_captioning:
                self._start_captioning(s.source)
        elif self.settings_control.first_run_enabled:
            self.settings_control.open_first_run()
        else:
            w.engine_status.message("No model configured.", "open Settings and choose the model "
                                                            "folder or a vLLM server")

    def start_engine(self, again: bool = False) -> None:
        """``again``: after an error (Retry, or F5): the failed engine is shut down first; a
        settings problem is shown as the error again."""
        try:
            es = engine_settings(self.settings)
        except VoxcapError as exc:
            self.window.engine_status.failed(EngineFailed(*error_for_the_app(exc)))
            return
        self.window.engine_status.message("Engine: starting again…" if again else
                                          "Engine: starting…")
        self.window.engine_status.expected_s = self.start_times.expected(self.settings.engine_key())
        if again:
            self.controller.apply_engine_settings(es, "retry")
        else:
            self.controller.start_engine(es)

    def _load_word_list(self) -> None:
        """The saved word list to the controller; a list that cannot be read is said once."""
        try:
            self.controller.set_glossary(Glossary(read_terms(self.settings.glossary_file)))
        except ConfigError as exc:
            self.window.show_notice(str(exc), exc.fix)

    def _translation_models_changed(self, installed: bool) -> None:
        """A translation model installed or removed here: the translation loads what the target
        now uses (the next line waits for no model) and drops what it no longer does."""
        if self.line_translation is not None:
            self.line_translation.models_changed()
        if not installed:
            self.translation_offer.removed_in_settings()

    def retry_engine(self) -> None:
        self.start_engine(again=True)

    def _new_session(self) -> None:
        self.assembler = CaptionAssembler(width=LINE_COLUMNS, max_lines=5,
                                          masker=make_masker(self.settings.mask_profanity))
        self.labels = {}
        self._last_piece_at: dict[str, float] = {}

    # ------------------------------------------------------------------------- events ----
    def _event_handlers(self) -> dict[type, Callable]:
        """What the GUI does with each of the controller's events (on the GUI thread); the
        notices come from one table for every front end (``app.notices``), after these."""
        w = self.window
        return {
            TextDelta: self._on_text,
            StreamFinished: lambda ev: self._show(self.assembler.finish(ev.stream_id), None),
            StreamOpened: self._on_stream_opened,
            CaptureStarted: self._on_capture_started,
            # what is read now (a fallback, the echo canceller lost, rebuilt): the meter says it
            CaptureRecovered: lambda ev: w.meter.set_origin(ev.source, ev.description),
            CaptureDeviceChanged: lambda ev: w.meter.set_origin(ev.source, ev.to_device),
            CaptioningState: self._on_captioning_state,
            EngineProgress: w.engine_status.progress,
            EngineReady: self._on_engine_ready,
            EngineFailed: self._on_engine_failed,
            EngineRestarting: self._on_engine_restarting,
            EngineStopped: lambda _ev: w.engine_status.stopped(),
            AppsChanged: lambda ev: w.set_apps(ev.apps),
            DevicesChanged: self._on_devices,
            AppProblem: lambda _ev: w.set_asked(""),  # a pause or resume refused: the state again
            DiagnosticsReady: self._on_diagnostics,
            LineTranslated: self._on_line_translated,
        }

    def on_event(self, ev) -> None:
        handler = self._handlers.get(type(ev))
        if handler is not None:
            handler(ev)
        notice = notice_for(ev, self.labels)
        if notice is not None:
            self.window.show_notice(notice.message, notice.fix, cause=notice.cause,
                                    assertive=notice.urgent, lifetime_s=notice.lifetime_s,
                                    spoken=notice.spoken)

    def _on_text(self, ev: TextDelta) -> None:
        self.deltas_seen += 1
        self._show(self.assembler.feed(ev), ev)

    def _on_line_translated(self, ev: LineTranslated) -> None:
        """A finished line's language (tagged in the history) and translation (history, overlay)."""
        self.window.history.add_language(ev.stream_id, ev.start_s, ev.end_s, ev.language)
        self.window.history.add_translation(ev.translation, ev.language, ev.target,
                                            line_key(ev.stream_id, ev.start_s), ev.refined)
        self.overlay.add_translation(ev)

    def _on_stream_opened(self, ev: StreamOpened) -> None:
        self.window.clear_notice("held")  # the held audio went to the engine
        self.labels[ev.stream_id] = ev.label
        self.assembler.set_label(ev.stream_id, ev.label)
        multi = len(set(self.labels.values())) > 1
        self.overlay.show_labels = self.window.history.show_labels = multi

    def _on_capture_started(self, ev: CaptureStarted) -> None:
        """The device really read (an echo-cancelled microphone, a fallback...)."""
        self.window.history.note_source(ev.source, ev.description)
        self.window.meter.set_origin(ev.source, ev.description)

    def _on_engine_ready(self, ev: EngineReady) -> None:
        w = self.window
        w.engine_status.ready(ev, random_weights=not self.settings.engine.remote
                              and self.settings.engine.dummy_weights,
                              captioning=self.state.active,
                              paused=self.state == Captioning.PAUSED)
        w.clear_notice("engine", "held")  # "cannot start: the engine is not running" ...
        w.meter.pending = ""
        self.tick()  # the meter shows the new engine now, not at its next second
        self.start_times.record(self.settings.engine_key(), ev.start_seconds)

    def _on_engine_failed(self, ev: EngineFailed) -> None:
        self.window.engine_status.failed(ev)
        self.window.meter.pending = ""

    def _on_engine_restarting(self, ev: EngineRestarting) -> None:
        w = self.window
        w.engine_status.restarting(ev)
        w.engine_status.expected_s = self.start_times.expected(self.settings.engine_key())
        mode = "" if self.settings.engine.remote else self.settings.engine.graph_mode
        w.meter.pending = f"restarting → {mode}" if mode else "restarting"
        self.tick()

    def _on_devices(self, ev: DevicesChanged) -> None:
        if ev.server_up:  # down: a notice (app.notices)
            self.window.set_devices(ev.devices)
            self.window.clear_notice("sound server")  # it is back

    def _on_diagnostics(self, ev: DiagnosticsReady) -> None:
        QApplication.clipboard().setText(ev.text)
        self.window.show_notice("Diagnostics copied to the clipboard (the log's end and doctor's "
                                "report; no caption text): paste them into your bug report.")

    def _show(self, updates, delta) -> None:
        if not updates:
            return
        stamp = None
        if delta is not None:
            ends = [u.line.end_s for u in updates if u.added]
            if ends:
                stamp = (delta.stream_id, delta.produced_at, max(ends))
        if self.overlay.isVisible():
            self.overlay.add_updates(updates, stamp)
        else:
            self.overlay.add_updates(updates, None)
        self.window.history.apply(updates)

    def _painted(self, stamps, painted_at: float) -> None:
        clock = self.controller.clock
        for sid, produced_at, end_s in stamps:
            self.paint_lag.add(painted_at - produced_at, painted_at)
            heard = clock.wall_time(sid, end_s)
            if heard is not None:
                self.caption_lag.add(painted_at - heard, painted_at)

    def _line_wall_time(self, line) -> float | None:
        return self.controller.clock.wall_time(line.stream_id, line.start_s)

    def _on_captioning_state(self, ev: CaptioningState) -> None:
        if ev.state == Captioning.CLOSED:
            QApplication.quit()
            return
        new_session = ev.state == Captioning.STARTING and not self.state.active
        if new_session:
            self._new_session()
            self.window.history.clear_history()
            self.window.history.show_labels = self.overlay.show_labels = False
            self.window.meter.set_origin("", "")
        self.overlay_linger.on_state(ev.state, new_session)
        self.state = ev.state
        self.window.levels.follow(ev.state.capturing)
        if not ev.state.capturing and self.window.notice_cause.startswith("silence "):
            self.window.clear_notice(self.window.notice_cause)  # no capture: no silence to say
        self.window.engine_status.captioning(ev.state.active,
                                             paused=ev.state == Captioning.PAUSED)
        half = (self._captioning_source.casefold().startswith("both") and len(ev.sources) == 1
                and ev.state != Captioning.OFF)
        self.window.set_state(ev.state, ev.message, f"{ev.sources[0]} only" if half else "")
        if ev.state == Captioning.OFF:
            # "You: capturing", "...resumed": about captures that are gone now
            self.window.clear_notice("CaptureStarted", "CaptureRecovered", "StreamResumed")
            self.window.sessions.refresh()
        self.exports.captioning_changed(ev)

    # ------------------------------------------------------------------------ actions ----
    def toggle_captioning(self) -> None:
        if self.state.active:
            self.controller.stop_captioning()
        elif self.state == Captioning.STOPPING:
            return
        elif not self.settings.configured and self.settings_control.first_run_enabled:
            self.settings_control.open_first_run()  # no model and no server yet: the choice, again
        else:
            if self.window.engine_status.state == "failed":  # F5 after an error: start it again
                self.retry_engine()  # captioning waits for it, its audio held meanwhile
            self._start_captioning(self.settings.source)

    def toggle_pause(self) -> None:
        """F6: pause while captioning, resume while paused (the session and history stay)."""
        if self.state.active:
            # said at once: the pause waits for the last words' flush (seconds on a real model)
            what = "resuming" if self.state == Captioning.PAUSED else "pausing"
            self.window.set_asked(what)
            self.overlay_state.asked(what)
            self.hub.publish(CaptioningAsked(what))  # the caption page says it too
            self.controller.toggle_pause()

    def close_requested(self) -> None:
        """The window's ×: quit when nothing is being captioned; while captioning, hide to the
        tray where there is one (said once), else ask. Ctrl+Q quits without asking."""
        if not self.state.active or self._quitting:
            self.quit()
        elif self.tray is not None:
            self.window.hide()
            if not self._said_hidden:
                self._said_hidden = True
                self.tray.showMessage("voxcap is still captioning",
                                      "The window is hidden; the captions go on. Quit from this "
                                      "icon's menu, or with Ctrl+Q in the window.")
        elif self._quit_question is None:  # one question at a time
            self._quit_question = self.window.ask_quit(self.quit)
            self._quit_question.finished.connect(lambda _r: setattr(self, "_quit_question", None))

    def _start_captioning(self, source: str) -> None:
        self._captioning_source = source
        self.controller.audio.echo_cancel = self.settings.echo_cancel  # read when "both" starts
        self.controller.start_captioning(source)

    def choose_source(self, key: str) -> None:
        if not key or key == self.settings.source:
            return
        self.settings.source = key
        self.settings_control.save()
        # switch now if captioning (a new session): the controller decides once the switches
        # before it have run, so the last choice wins even while one is still switching
        self._captioning_source = key
        self.overlay_state.tracker.on_switch()  # the overlay names what it captions next
        self.controller.audio.echo_cancel = self.settings.echo_cancel
        self.controller.switch_source(key)

    def set_overlay_visible(self, on: bool) -> None:
        self.window_state.overlay.visible = on
        self.overlay.setVisible(on)
        self.save_state()

    def _click_through_changed(self, on: bool) -> None:
        self.window.act_click.setChecked(on)
        self.window_state.overlay.click_through = on
        self.save_state()

    def place_overlay(self) -> None:
        o = self.window_state.overlay
        screens, primary = screens_info()
        saved = (o.geometry[0], o.geometry[1], o.geometry[2], o.geometry[3]) if o.geometry else None
        rect = place_overlay(saved, o.screen, screens, primary, self.overlay.fitted_height())
        self.overlay.setGeometry(*rect)

    def reset_overlay(self) -> None:
        o = self.window_state.overlay
        o.geometry, o.screen = None, ""
        self.place_overlay()
        self.set_overlay_visible(True)
        self.window.act_overlay.setChecked(True)
        self.save_overlay_geometry()

    def save_overlay_geometry(self) -> None:
        o = self.window_state.overlay
        g = self.overlay.geometry()
        o.geometry = [g.x(), g.y(), g.width(), g.height()]
        screen = self.overlay.screen()
        o.screen = screen.name() if screen is not None else ""
        self.save_state()

    def _meter_toggled(self, on: bool) -> None:
        if self.window_state.show_meter != on:
            self.window_state.show_meter = on
            self.save_state()
        if on:
            self.tick()

    def tick(self) -> None:
        self.window.meter.expect_remote = self.settings.engine.remote
        reading = self.sampler.sample()
        if self.window.meter_dock.isVisible():
            self.window.meter.show_reading(reading, self.sampler)
        self.sharing.show_status()

    def show_window(self) -> None:
        self.window.showNormal()
        self.window.raise_()
        self.window.activateWindow()

    def handle_message(self, msg: str) -> None:
        """From a second ``voxcap gui`` (see ``instance``)."""
        if msg == "show":
            self.show_window()
        elif msg == "toggle-click-through":
            self.overlay.set_click_through(not self.overlay.click_through)
        elif msg == "toggle-overlay":
            self.window.act_overlay.toggle()
        elif msg == "toggle-captioning":
            self.toggle_captioning()

    def copy_all(self) -> None:
        text = self.window.history.toPlainText()
        QApplication.clipboard().setText(text)
        self.window.show_notice(f"Copied {len(text.splitlines())} caption paragraphs.")

    def copy_diagnostics(self) -> None:
        """Help > Copy diagnostics: the log's tail and ``voxcap doctor --json`` to the clipboard,
        collected off the GUI thread (doctor takes seconds)."""
        self.window.show_notice("Collecting diagnostics (voxcap doctor)…")
        threading.Thread(target=lambda: self.bridge.post(DiagnosticsReady(diagnostics_text())),
                         name="voxcap-diagnostics", daemon=True).start()

    # ----------------------------------------------------------------------- settings ----
    def open_settings(self) -> None:
        self.settings_control.open()
        self.sharing.show_status()  # the share panel says how sharing is doing at once

    def _follow_settings(self) -> None:
        """What follows a change of the settings it uses (sharing subscribes itself), in this
        order: the overlay's look, then its height, the masker, the engine."""
        changes = self.settings_changes
        changes.subscribe(lambda c: self.overlay.apply_settings(c.new.overlay), "overlay")
        changes.subscribe(lambda c: self.overlay.set_translation_shown(c.new.translation.shown()),
                          "translation")
        changes.subscribe(lambda _c: self.overlay.fit_height(), *OVERLAY_HEIGHT)
        changes.subscribe(lambda c: setattr(self.assembler, "masker",
                                            make_masker(c.new.mask_profanity)), "mask_profanity")
        changes.subscribe(lambda _c: self.window.sessions.show_text(), "mask_profanity")
        changes.subscribe(self._restart_engine, restarting_engine=True)

    def _restart_engine(self, change: SettingsChange) -> None:
        """A setting that the engine is started with changed: it restarts with the new ones."""
        try:
            es = engine_settings(change.new)
        except VoxcapError as exc:
            self.window.engine_status.failed(EngineFailed(*error_for_the_app(exc)))
        else:
            self.controller.apply_engine_settings(es, describe_change(change.old, change.new))

    def save_state(self) -> None:
        """Where the windows are (and the share token), saved at once."""
        if not self.persist:
            return
        try:
            save_window_state(self.window_state)
        except OSError as exc:
            log.warning("the window state could not be saved", exc_info=True)
            self.window.show_notice(f"Window positions could not be saved: {exc.strerror or exc}",
                                    "check that the config folder is writable")

    # --------------------------------------------------------------------------- quit ----
    def quit(self) -> None:
        """Flush the captions, close the journal, stop the engine, then leave (never blocks)."""
        if self._quitting:
            return
        self._quitting = True
        self.window_state.window_geometry = bytes(self.window.saveGeometry().toHex().data()).decode()
        self.save_state()
        self.settings_control.save()  # an older file's window state left out from now on
        self.meter_timer.stop()
        self.sharing.switch_off()
        self.overlay.hide()
        self.placement.close()
        self.shortcuts.close()
        self.window.hide()
        if self.tray is not None:
            self.tray.hide()
        # CaptioningState(CLOSED) quits the event loop; a slow engine start or vLLM teardown
        # (14 s measured) is not waited for: its processes die with the app (PR_SET_PDEATHSIG)
        self.controller.shutdown(engine_wait_s=QUIT_ENGINE_WAIT_S)
        QTimer.singleShot(90_000, QApplication.quit)  # never hang on the way out


def load_saved() -> tuple[AppSettings, WindowState, str | None]:
    """The saved settings, the window state and what the person is told about either."""
    # the state first: the first time it is taken from an older settings file, before anything
    # could write that file again
    state, state_problem = load_window_state()
    settings, problem = load_settings()
    return settings, state, " ".join(p for p in (problem, state_problem) if p) or None


def run_gui(args) -> int:
    """``voxcap gui``: one app per user; a second start hands its request to the first."""
    overlay_path = prepare_platform()  # may set QT_QPA_PLATFORM (GNOME: XWayland)
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    app.setApplicationName("voxcap")
    app.setApplicationDisplayName("voxcap")
    app.setDesktopFileName("voxcap")
    app.setWindowIcon(app_icon())
    app.setQuitOnLastWindowClosed(False)
    from .instance import InstanceServer, send_to_running

    message = next((m for m in ("toggle-click-through", "toggle-overlay", "toggle-captioning")
                    if getattr(args, m.replace("-", "_"), False)), "show")
    if send_to_running(message):
        print(f"voxcap: sent '{message}' to the running app", file=sys.stderr)
        return 0
    if message != "show":
        print("voxcap: no running app to toggle", file=sys.stderr)
        return 1
    stored, state, problem = load_saved()
    overrides = RunOverrides.from_args(stored, args)
    if overrides.values:
        log.info("for this run only: %s", ", ".join(f"{k}={v}" for k, v in overrides.values.items()))
    vapp = VoxcapApp(overrides.apply(), problem, overlay_path=overlay_path, overrides=overrides,
                     engine_verbose=logs.engine_verbose(logs.level_of(args)), window_state=state)
    server = InstanceServer(vapp)
    server.messageReceived.connect(vapp.handle_message)
    server.listen()
    from .quit_signals import QuitOnSignals

    def leave() -> None:
        server.server.close()  # its socket file goes with it
        leave_at_once(1)
    signals = QuitOnSignals(vapp.quit, leave)  # noqa: F841 - kept while the app runs
    vapp.start()
    t0 = time.monotonic()
    code = app.exec()
    log.info("the app ran %.0f s", time.monotonic() - t0)
    leave_at_once(code)
    return code
