"""The app: settings, the session controller, the windows, and the routing of events between them.

Threads: the GUI thread never waits on the engine. Engine start, restart and shutdown, stream
open/close, capture start/stop and journal writes run on the controller's threads
(``voxcap.app.controller``); their events come back through ``EventBridge`` as one queued
signal, handled here on the GUI thread: caption assembly (``CaptionAssembler``), then the
overlay and the history.

Measurements taken here (shown by the meter, reported by ``benchmarks/gui_bench.py``):
``paint_lag``: delta leaves the engine (``TextDelta.produced_at``) -> the overlay painted the
update it caused; ``caption_lag``: audio captured -> on screen (definition in ``voxcap.app.lag``).
"""

from __future__ import annotations

import logging
import sys
import threading
import time

from PySide6.QtCore import QByteArray, QObject, QTimer
from PySide6.QtWidgets import QApplication, QFileDialog

from .. import logs
from ..app.controller import QUIT_ENGINE_WAIT_S, SessionController
from ..app.diagnostics import DiagnosticsReady, diagnostics_text
from ..app.lag import RecentValues
from ..app.meter import MeterSampler
from ..app.settings import (
    AppSettings,
    RunOverrides,
    describe_change,
    load_settings,
    save_settings,
)
from ..app.start_times import StartTimes
from ..captions.assembly import CaptionAssembler
from ..captions.export import check_export_path, export
from ..captions.journal import JournalStatus
from ..captions.masking import make_masker
from ..captions.sessions import SessionStore
from ..errors import VoxcapError
from ..eventhub import EventHub
from ..events import (
    AppProblem,
    AppsChanged,
    Captioning,
    CaptioningState,
    CaptureDeviceChanged,
    CaptureInterrupted,
    CaptureLoss,
    CaptureRecovered,
    CaptureStarted,
    DevicesChanged,
    EngineFailed,
    EngineProgress,
    EngineReady,
    EngineRestarting,
    EngineStopped,
    StreamFinished,
    StreamGap,
    StreamInterrupted,
    StreamOpened,
    StreamResumed,
    TextDelta,
)
from ..share import ShareOptions, Sharing, new_token, page_style
from .bridge import EventBridge
from .first_run import FirstRunDialog
from .global_shortcuts import GlobalShortcuts
from .icons import app_icon
from .main_window import MainWindow
from .overlay import CaptionOverlay, place_overlay
from .overlay_linger import OverlayLinger
from .overlay_placement import OverlayPlacement, prepare_platform
from .settings_dialog import SettingsDialog
from .tray import Tray, tray_available

log = logging.getLogger(__name__)
LINE_COLUMNS = 160  # assembler lines; the overlay wraps them to its width, the history joins them
NOTICES = (CaptureStarted, CaptureInterrupted, CaptureRecovered, CaptureDeviceChanged, CaptureLoss,
           StreamGap, StreamInterrupted, StreamResumed)
EXPORT_FILTERS = {"SubRip subtitles (*.srt)": ".srt", "WebVTT subtitles (*.vtt)": ".vtt",
                  "Plain text (*.txt)": ".txt"}


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
    def __init__(self, settings: AppSettings | None = None, settings_problem: str | None = None, *,
                 controller_factory=None, sessions_root=None, persist: bool = True,
                 use_tray: bool = True, first_run: bool = True, overlay_path=None,
                 overrides: RunOverrides | None = None, engine_verbose: bool = False) -> None:
        super().__init__()
        self.settings = settings or AppSettings()
        self.overrides = overrides  # command-line values for this run only: never saved
        self.settings_problem = settings_problem
        self.persist = persist
        self.first_run_enabled = first_run
        self.sessions_root = sessions_root
        self.bridge = EventBridge(self)
        # the controller's events: to the GUI thread, and to sharing (which, started later,
        # learns whether captioning is on from the latest CaptioningState)
        self.hub = EventHub(keep_latest=(CaptioningState,))
        self.hub.subscribe(self.bridge.post)
        factory = controller_factory or (lambda publish: SessionController(
            publish, journal_root=sessions_root, verbose=engine_verbose))
        self.controller = factory(self.hub.publish)
        self.sharing = Sharing(self.hub, session_source=self.current_session)
        self._share_problem = ""
        self.caption_lag = RecentValues()
        self.paint_lag = RecentValues()
        self.sampler = MeterSampler(self.controller, self.caption_lag, self.paint_lag)
        self.start_times = StartTimes(persist=persist)
        self.state = Captioning.OFF
        self.session_id = ""
        self._captioning_source = ""  # what the running (or last) captioning was started with
        self.labels: dict[str, str] = {}
        self.deltas_seen = 0
        self._quitting = False
        self._export_after_stop = False
        self.settings_dialog: SettingsDialog | None = None
        self.first_run_dialog: FirstRunDialog | None = None
        self._new_session()

        self.window = MainWindow(sessions_root)
        self.window.setWindowIcon(app_icon())
        self.window.history.time_of = self._line_wall_time
        self.overlay = CaptionOverlay(self.settings.overlay)
        self.overlay.setWindowIcon(app_icon())
        self.overlay.on_painted = self._painted
        self.overlay_linger = OverlayLinger(self.overlay)  # the last rows after Stop, then clear
        self.placement = OverlayPlacement(self.overlay, overlay_path)  # on top: X11/layer-shell
        self.placement.menuRequested.connect(self.show_window)
        self.placement.outputsChanged.connect(self.place_overlay)
        self.shortcuts = GlobalShortcuts(self.placement.path, self)
        self.shortcuts.activated.connect(self.handle_message)
        for act in (self.window.act_overlay, self.window.act_start):  # where users look for keys
            act.setToolTip(f"{act.toolTip()} — global shortcuts: {self.shortcuts.summary}"
                           + (f"; {self.shortcuts.fix}" if self.shortcuts.fix else ""))
        self.tray = None
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

    # ------------------------------------------------------------------------- set-up ----
    def _wire(self) -> None:
        w = self.window
        self.bridge.event.connect(self.on_event)
        w.act_start.triggered.connect(self.toggle_captioning)
        w.engine_status.retryRequested.connect(self.retry_engine)
        w.act_diagnostics.triggered.connect(self.copy_diagnostics)
        w.act_quit.triggered.connect(self.quit)
        w.closing.connect(self.quit)
        w.act_overlay.toggled.connect(self.set_overlay_visible)
        w.act_click.toggled.connect(self.overlay.set_click_through)
        self.overlay.clickThroughChanged.connect(self._click_through_changed)
        self.overlay.geometryChangedByUser.connect(self.save_overlay_geometry)
        self.overlay.hideRequested.connect(lambda: w.act_overlay.setChecked(False))
        self.overlay.settingsRequested.connect(self.open_settings)
        w.act_reset_overlay.triggered.connect(self.reset_overlay)
        w.act_settings.triggered.connect(self.open_settings)
        w.act_export.triggered.connect(self.export_current)
        w.act_copy.triggered.connect(self.copy_all)
        w.act_meter.toggled.connect(self._meter_toggled)
        w.sourceChosen.connect(self.choose_source)
        w.sessions.exportRequested.connect(self.export_session)

    def start(self) -> None:
        """Show the windows and start the engine (or the first-run dialog). Returns at once."""
        s = self.settings
        w = self.window
        if s.window_geometry:
            w.restoreGeometry(QByteArray.fromHex(s.window_geometry.encode()))
        w.set_source(s.source)
        w.act_meter.setChecked(s.show_meter)
        w.meter_dock.setVisible(s.show_meter)
        self.place_overlay()
        w.act_click.setChecked(self.overlay.click_through)
        w.act_overlay.setChecked(s.overlay.visible)
        self.overlay.setVisible(s.overlay.visible)
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
        self.apply_share()
        self.tick()
        self.controller.watch_devices()
        if s.configured:
            self.start_engine()
            if s.start_captioning:
                self._start_captioning(s.source)
        elif self.first_run_enabled:
            self.open_first_run()
        else:
            w.engine_status.message("No model configured.", "open Settings and choose the model "
                                                            "folder or a vLLM server")

    def start_engine(self, again: bool = False) -> None:
        """``again``: after an error (Retry, or F5): the failed engine is shut down first; a
        settings problem is shown as the error again."""
        try:
            es = engine_settings(self.settings)
        except VoxcapError as exc:
            self.window.engine_status.failed(EngineFailed(exc.message, exc.fix))
            return
        self.window.engine_status.message("Engine: starting again…" if again else
                                          "Engine: starting…")
        self.window.engine_status.expected_s = self.start_times.expected(self.settings.engine_key())
        if again:
            self.controller.apply_engine_settings(es, "retry")
        else:
            self.controller.start_engine(es)

    def retry_engine(self) -> None:
        self.start_engine(again=True)

    def _new_session(self) -> None:
        self.assembler = CaptionAssembler(width=LINE_COLUMNS, max_lines=5,
                                          masker=make_masker(self.settings.mask_profanity))
        self.labels = {}
        self._last_piece_at: dict[str, float] = {}

    # ------------------------------------------------------------------------- events ----
    def on_event(self, ev) -> None:
        w = self.window
        if isinstance(ev, TextDelta):
            self.deltas_seen += 1
            self._show(self.assembler.feed(ev), ev)
        elif isinstance(ev, StreamFinished):
            self._show(self.assembler.finish(ev.stream_id), None)
        elif isinstance(ev, StreamOpened):
            w.clear_notice("held")  # the held audio went to the engine
            self.labels[ev.stream_id] = ev.label
            self.assembler.set_label(ev.stream_id, ev.label)
            multi = len(set(self.labels.values())) > 1
            self.overlay.show_labels = self.window.history.show_labels = multi
        elif isinstance(ev, CaptureStarted):  # the device really read (an echo-cancelled mic...)
            w.history.note_source(ev.source, ev.description)
            w.meter.set_origin(ev.source, ev.description)
            w.show_notice(ev.message, cause=type(ev).__name__)
        elif isinstance(ev, CaptioningState):
            self._captioning_state(ev)
        elif isinstance(ev, EngineProgress):
            w.engine_status.progress(ev)
        elif isinstance(ev, EngineReady):
            w.engine_status.ready(ev, random_weights=self.settings.engine == "local"
                                  and self.settings.dummy_weights,
                                  captioning=self.state.active)
            w.clear_notice("engine", "held")  # "cannot start: the engine is not running" ...
            w.meter.pending = ""
            self.tick()  # the meter shows the new engine now, not at its next second
            self.start_times.record(self.settings.engine_key(), ev.start_seconds)
        elif isinstance(ev, EngineFailed):
            w.engine_status.failed(ev)
            w.meter.pending = ""
        elif isinstance(ev, EngineRestarting):
            w.engine_status.restarting(ev)
            w.engine_status.expected_s = self.start_times.expected(self.settings.engine_key())
            mode = self.settings.graph_mode if self.settings.engine == "local" else ""
            w.meter.pending = f"restarting → {mode}" if mode else "restarting"
            self.tick()
        elif isinstance(ev, EngineStopped):
            w.engine_status.stopped()
        elif isinstance(ev, AppsChanged):
            w.set_apps(ev.apps)
        elif isinstance(ev, DevicesChanged):
            if ev.server_up:
                w.set_devices(ev.devices)
                w.clear_notice("sound server")  # it is back
            else:
                w.show_notice("The sound server is not running: no devices to capture from.",
                              "start PulseAudio or PipeWire (it usually starts with the desktop)",
                              cause="sound server", assertive=True)
        elif isinstance(ev, DiagnosticsReady):
            QApplication.clipboard().setText(ev.text)
            w.show_notice("Diagnostics copied to the clipboard (the log's end and doctor's "
                          "report; no caption text): paste them into your bug report.")
        elif isinstance(ev, AppProblem):
            w.show_notice(ev.message, ev.fix, cause=ev.where, assertive=True)
        elif isinstance(ev, JournalStatus):
            if ev.writing:
                w.clear_notice("journal")
            w.show_notice(ev.message, ev.fix, cause="journal", assertive=not ev.writing)
        elif isinstance(ev, NOTICES) and getattr(ev, "message", ""):
            w.show_notice(ev.message, cause=type(ev).__name__)

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

    def _captioning_state(self, ev: CaptioningState) -> None:
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
        self.window.engine_status.captioning(ev.state.active)
        if ev.session_id:
            self.session_id = ev.session_id
        half = (self._captioning_source.casefold().startswith("both") and len(ev.sources) == 1
                and ev.state != Captioning.OFF)
        detail = f"{ev.sources[0]} only" if half else ""
        self.window.set_state(ev.state, ev.message, detail)
        if ev.state == Captioning.OFF:
            # "You: capturing", "...resumed": about captures that are gone now
            self.window.clear_notice("CaptureStarted", "CaptureRecovered", "StreamResumed")
            self.window.sessions.refresh()
            if self._export_after_stop:
                self._export_after_stop = False
                self.window.clear_notice("export")
                self.export_session(self.current_session())

    # ------------------------------------------------------------------------ actions ----
    def toggle_captioning(self) -> None:
        if self.state.active:
            self.controller.stop_captioning()
        elif self.state != Captioning.STOPPING and not self.settings.configured and \
                self.first_run_enabled:  # no model and no server yet: the choice, again
            if self.first_run_dialog is None:
                self.open_first_run()
            else:
                self.first_run_dialog.raise_()
        elif self.state != Captioning.STOPPING:
            if self.window.engine_status.state == "failed":  # F5 after an error: start it again
                self.retry_engine()  # captioning waits for it, its audio held meanwhile
            self._start_captioning(self.settings.source)

    def _start_captioning(self, source: str) -> None:
        self._captioning_source = source
        self.controller.audio.echo_cancel = self.settings.echo_cancel  # read when "both" starts
        self.controller.start_captioning(source)

    def choose_source(self, key: str) -> None:
        if not key or key == self.settings.source:
            return
        self.settings.source = key
        self.save()
        if self.state.active:  # switch now: the new source(s) in a new session
            self.controller.stop_captioning()
            self._start_captioning(key)

    def set_overlay_visible(self, on: bool) -> None:
        self.settings.overlay.visible = on
        self.overlay.setVisible(on)
        self.save()

    def _click_through_changed(self, on: bool) -> None:
        self.window.act_click.setChecked(on)
        self.settings.overlay.click_through = on
        self.save()

    def place_overlay(self) -> None:
        o = self.settings.overlay
        screens, primary = screens_info()
        rect = place_overlay(tuple(o.geometry) if o.geometry else None, o.screen, screens, primary,
                             self.overlay.fitted_height())
        self.overlay.setGeometry(*rect)

    def reset_overlay(self) -> None:
        o = self.settings.overlay
        o.geometry, o.screen = None, ""
        self.place_overlay()
        self.set_overlay_visible(True)
        self.window.act_overlay.setChecked(True)
        self.save_overlay_geometry()

    def save_overlay_geometry(self) -> None:
        o = self.settings.overlay
        g = self.overlay.geometry()
        o.geometry = [g.x(), g.y(), g.width(), g.height()]
        screen = self.overlay.screen()
        o.screen = screen.name() if screen is not None else ""
        self.save()

    def _meter_toggled(self, on: bool) -> None:
        if self.settings.show_meter != on:
            self.settings.show_meter = on
            self.save()
        if on:
            self.tick()

    def tick(self) -> None:
        self.window.meter.expect_remote = self.settings.engine == "remote"
        reading = self.sampler.sample()
        if self.window.meter_dock.isVisible():
            self.window.meter.show_reading(reading, self.sampler)
        self.show_share_status()

    # ------------------------------------------------------------------------ sharing ----
    def apply_share(self) -> None:
        """Start, restart or stop the caption server for the settings (off the GUI thread)."""
        sh = self.settings.share
        if sh.enabled and (sh.lan or sh.local_token) and not sh.token:
            sh.token = new_token()  # kept: links and QR codes stay valid across restarts
            self.save()
        options = ShareOptions(sh.enabled, sh.lan, sh.port, sh.allow_origin, sh.token,
                               sh.obs_url if sh.obs else "", sh.obs_password,
                               local_token=sh.local_token)
        self.sharing.apply(options, style=page_style(self.settings.overlay),
                           masker=make_masker(self.settings.mask_profanity))

    def show_share_status(self) -> None:
        status = self.sharing.status()
        if self.settings_dialog is not None:
            self.settings_dialog.share.show_status(status)
        self.window.set_sharing(status.running, status.viewers, status.lan)
        if status.problem != self._share_problem:
            self._share_problem = status.problem
            if status.problem:
                self.window.show_notice(f"Sharing captions: {status.problem}", status.fix,
                                        cause="share")
            else:
                self.window.clear_notice("share")

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

    # ------------------------------------------------------------------------- export ----
    def current_session(self):
        session = self.controller.journal_session()
        if session is None and self.session_id:
            try:
                session = SessionStore(self.sessions_root).open(self.session_id)
            except VoxcapError:
                session = None
        return session

    def export_current(self) -> None:
        if self.state == Captioning.STOPPING:  # the last words are still coming: export once flushed
            self._export_after_stop = True
            self.window.show_notice("Export waits for the last words to be flushed…",
                                    cause="export")
            return
        self.export_session(self.current_session())

    def export_session(self, session, path: str | None = None) -> str | None:
        """Export a session (the dialog asks for the path unless given); returns the path."""
        if session is None:
            self.window.show_notice("Nothing to export yet: start captioning first.")
            return None
        if path is None:
            path, chosen = QFileDialog.getSaveFileName(
                self.window, "Export captions", f"{session.session_id}.srt",
                ";;".join(EXPORT_FILTERS))
            if not path:
                return None
            if "." not in path.rsplit("/", 1)[-1]:
                path += EXPORT_FILTERS.get(chosen, ".srt")
        try:
            out = check_export_path(path)
            export(session, out, masker=make_masker(self.settings.mask_profanity),
                   timestamps=out.suffix == ".txt")
        except (VoxcapError, OSError) as exc:
            msg = getattr(exc, "message", str(exc))
            self.window.show_notice(f"Export failed: {msg}", getattr(exc, "fix", ""))
            return None
        self.window.show_notice(f"Exported to {out}")
        return str(out)

    # ----------------------------------------------------------------------- settings ----
    def open_settings(self) -> None:
        if self.settings_dialog is None:
            self.settings_dialog = SettingsDialog(self.settings, self.window)
            self.settings_dialog.applied.connect(self.apply_settings)
            self.settings_dialog.finished.connect(self._settings_closed)
        self.show_share_status()
        self.settings_dialog.show()
        self.settings_dialog.raise_()
        self.settings_dialog.activateWindow()

    def _settings_closed(self, _result: int) -> None:
        self.settings_dialog.deleteLater()
        self.settings_dialog = None

    def apply_settings(self, new: AppSettings) -> None:
        old = self.settings
        # what the windows changed meanwhile is not the dialog's to undo
        new.source, new.window_geometry, new.show_meter = old.source, old.window_geometry, old.show_meter
        for f in ("visible", "click_through", "geometry", "screen"):
            setattr(new.overlay, f, getattr(old.overlay, f))
        if not new.share.token:  # made by the app after the dialog opened
            new.share.token = old.share.token
        self.settings = new
        refit = (new.overlay.lines, new.overlay.font_size, new.overlay.font_family,
                 new.overlay.bold) != (old.overlay.lines, old.overlay.font_size,
                                       old.overlay.font_family, old.overlay.bold)
        self.overlay.apply_settings(new.overlay)
        if refit:
            self.overlay.fit_height()
        self.assembler.masker = make_masker(new.mask_profanity)
        self.apply_share()
        if new.engine_key() != old.engine_key():
            try:
                es = engine_settings(new)
            except VoxcapError as exc:
                self.window.engine_status.failed(EngineFailed(exc.message, exc.fix))
            else:
                self.controller.apply_engine_settings(es, describe_change(old, new))
        self.save()

    def open_first_run(self) -> None:
        dlg = FirstRunDialog(self.window, settings=self.settings)
        self.first_run_dialog = dlg
        dlg.accepted.connect(lambda: self._first_run_done(dlg.result_choice))
        dlg.rejected.connect(lambda: self.window.engine_status.message(
            "No model configured.", "press Start captioning (F5) to choose again: a model "
            "folder, the download, or a vLLM server (`voxcap serve` on a GPU computer)"))
        dlg.finished.connect(lambda _r: self._first_run_closed(dlg))
        dlg.open()

    def _first_run_closed(self, dlg) -> None:
        dlg.deleteLater()  # a closed dialog must not linger in the accessibility tree
        if self.first_run_dialog is dlg:
            self.first_run_dialog = None

    def _first_run_done(self, choice: dict | None) -> None:
        if not choice:
            return
        new = self.settings.copy()
        for k, v in choice.items():
            setattr(new, k, v)
        self.apply_settings(new)

    def save(self) -> None:
        if not self.persist:
            return
        settings = self.overrides.for_saving(self.settings) if self.overrides else self.settings
        try:
            save_settings(settings)
        except OSError as exc:
            log.warning("the settings could not be saved", exc_info=True)
            self.window.show_notice(f"Settings could not be saved: {exc.strerror or exc}",
                                    "check that the config folder is writable")

    def copy_diagnostics(self) -> None:
        """Help > Copy diagnostics: the log's tail and ``voxcap doctor --json`` to the clipboard,
        collected off the GUI thread (doctor takes seconds)."""
        self.window.show_notice("Collecting diagnostics (voxcap doctor)…")
        threading.Thread(target=lambda: self.bridge.post(DiagnosticsReady(diagnostics_text())),
                         name="voxcap-diagnostics", daemon=True).start()

    # --------------------------------------------------------------------------- quit ----
    def quit(self) -> None:
        """Flush the captions, close the journal, stop the engine, then leave (never blocks)."""
        if self._quitting:
            return
        self._quitting = True
        self.settings.window_geometry = bytes(self.window.saveGeometry().toHex()).decode()
        self.save()
        self.meter_timer.stop()
        self.sharing.apply(ShareOptions())  # viewers disconnected, port freed (in the background)
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


def run_gui(args) -> int:
    """``voxcap gui``: one app per user; a second start hands its request to the first."""
    overlay_path = prepare_platform()  # may set QT_QPA_PLATFORM (GNOME: XWayland)
    app = QApplication.instance() or QApplication(sys.argv[:1])
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
    stored, problem = load_settings()
    overrides = RunOverrides.from_args(stored, args)
    if overrides.values:
        log.info("for this run only: %s", ", ".join(f"{k}={v}" for k, v in overrides.values.items()))
    vapp = VoxcapApp(overrides.apply(), problem, overlay_path=overlay_path, overrides=overrides,
                     engine_verbose=logs.engine_verbose(logs.level_of(args)))
    server = InstanceServer(vapp)
    server.messageReceived.connect(vapp.handle_message)
    server.listen()
    vapp.start()
    t0 = time.monotonic()
    code = app.exec()
    log.info("the app ran %.0f s", time.monotonic() - t0)
    _leave_now_if_engine_still_starting(code)
    return code


def _leave_now_if_engine_still_starting(code: int) -> None:
    """Quit while the engine starts or stops slowly: the controller waited a few seconds for it
    (``QUIT_ENGINE_WAIT_S``), but its thread is still importing, loading or tearing vLLM down in
    C++ code; letting the interpreter finalise around it took seconds and could abort
    ("exception not rethrown"). Captions and journal are closed by now, and vLLM's processes die
    with this one (PR_SET_PDEATHSIG), so leave at once."""
    if any(t.name == "voxcap-engine" and t.is_alive() for t in threading.enumerate()):
        import os

        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
