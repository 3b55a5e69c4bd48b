"""Export from the app: the running (or last) session, or one picked in Previous sessions, to
SubRip, WebVTT or plain text through the file dialog. Asked for while the last words are still
being flushed, the export waits for them (it runs once captioning is off)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QFileDialog

from ...captions.export import check_export_path, default_name, export
from ...captions.masking import Masker
from ...captions.sessions import SessionStore
from ...errors import VoxcapError
from ...events import Captioning, CaptioningState

EXPORT_FILTERS = {"SubRip subtitles (*.srt)": ".srt", "WebVTT subtitles (*.vtt)": ".vtt",
                  "Plain text (*.txt)": ".txt"}


class ExportController:
    def __init__(self, window, controller, sessions_root, masker: Callable[[], Masker | None]) -> None:
        self.window = window
        self.controller = controller
        self.sessions_root = sessions_root
        self.masker = masker  # the profanity masker the settings ask for now
        self.session_id = ""  # the running (or last) session's
        self._stopping = False
        self._after_stop = False

    def captioning_changed(self, ev: CaptioningState) -> None:
        if ev.session_id:
            self.session_id = ev.session_id
        self._stopping = ev.state == Captioning.STOPPING
        if ev.state == Captioning.OFF and self._after_stop:
            self._after_stop = False
            self.window.clear_notice("export")
            self.export_session(self.current_session())

    def current_session(self):
        """The session being captioned, else the last one (None: none yet)."""
        session = self.controller.journal_session()
        if session is None and self.session_id:
            try:
                session = SessionStore(self.sessions_root).open(self.session_id)
            except VoxcapError:
                session = None
        return session

    def export_current(self) -> None:
        if self._stopping:  # the last words are still coming: export once flushed
            self._after_stop = True
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
            path = self._ask_path(default_name(session))
            if not path:
                return None
        try:
            out = check_export_path(path)
            export(session, out, masker=self.masker(), timestamps=out.suffix == ".txt")
        except (VoxcapError, OSError) as exc:
            msg = getattr(exc, "message", str(exc))
            self.window.show_notice(f"Export failed: {msg}", getattr(exc, "fix", ""))
            return None
        self.window.show_notice(f"Exported to {out}")
        return str(out)

    def _ask_path(self, name: str) -> str:
        path, chosen = QFileDialog.getSaveFileName(
            self.window, "Export captions", name, ";;".join(EXPORT_FILTERS))
        if path and "." not in path.rsplit("/", 1)[-1]:
            path += EXPORT_FILTERS.get(chosen, ".srt")
        return path
