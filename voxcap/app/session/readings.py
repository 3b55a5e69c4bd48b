"""What the session controller's rooms say now, readable from any thread (the meter, the
status line, the tests): ``SessionController`` inherits these; each reads the room that knows."""

from __future__ import annotations

from ...events import Captioning
from .caption_path import CaptionPath
from .capture_routing import CaptureRouting
from .engine_lifecycle import EngineLifecycle
from .journal_feed import JournalFeed
from .state_machine import CaptioningStateMachine
from .stream_flush import StreamFlush


class SessionReadings:
    _path: CaptionPath
    _states: CaptioningStateMachine
    _engine: EngineLifecycle
    _routing: CaptureRouting
    _flush: StreamFlush
    _journal: JournalFeed

    @property
    def rollovers(self) -> int:
        """Engine-session switches in this captioning session (the meter's count)."""
        return self._path.rollovers

    @property
    def state(self) -> Captioning:
        return self._states.state

    @property
    def engine(self):
        return self._engine.engine

    @property
    def engine_settings(self):
        return self._engine.settings

    @property
    def hold_s(self) -> float:
        return self._routing.hold_s

    @hold_s.setter
    def hold_s(self, seconds: float) -> None:
        self._routing.hold_s = seconds

    @property
    def flush_timeout_s(self) -> float:
        return self._flush.timeout_s

    @flush_timeout_s.setter
    def flush_timeout_s(self, seconds: float) -> None:
        self._flush.timeout_s = seconds

    @property
    def ready_info(self):
        eng = self.engine  # read once: the controller's thread may replace it meanwhile
        return eng.ready_info if eng is not None and eng.is_ready else None

    def stats(self):
        """The engine's measured stats now (``StatsSnapshot``), or None without an engine."""
        eng = self.engine
        return eng.stats.snapshot() if eng is not None else None

    def dropped_audio_s(self) -> float:
        """Audio that will never be captioned, all causes: capture losses (queue full, overflow,
        gaps), remote-engine gaps, held audio beyond ``hold_s``."""
        return self._routing.dropped_s()

    def held_audio_s(self) -> float:
        return self._routing.held_s()

    def input_levels(self) -> dict[str, float | None]:
        """Each live source's input level now, in dBFS (None: no audio from it yet); empty
        while nothing is captured (``session.input_levels``)."""
        return self._routing.levels.levels()

    @property
    def silence_after_s(self) -> float:
        """A source with no sound this long, while the other side of "Both" has sound, is
        said (alone: three times as long)."""
        return self._routing.levels.after_s

    @silence_after_s.setter
    def silence_after_s(self, seconds: float) -> None:
        self._routing.levels.after_s = seconds

    def journal_session(self):
        """The current session as journalled so far (``sessions.Session``), or None."""
        return self._journal.session()
