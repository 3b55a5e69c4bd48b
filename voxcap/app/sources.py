"""Where the session controller's audio comes from: the sound server (live) or an audio file.

Both have the same three methods (``resolve``, ``open``, ``watch``); tests give a fake with
them. A file is one more source: it delivers its blocks like a capture (as fast as the engine
takes them, or paced like live audio) and then ``SourceEnded``, on which the controller
flushes and ends the session.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..audio_file import iter_blocks, probe
from ..events import AudioBlock, CaptureStopped, SourceEnded
from ..framing import SAMPLE_RATE, STEP_SECONDS

log = logging.getLogger(__name__)


class Stoppable(Protocol):
    """What ``open`` and ``watch`` return: a capture, a file's reader, a device watcher."""

    def stop(self) -> object: ...


class AudioSources:
    """Audio from the sound server (the capture layer)."""

    journal_kind = "live"
    live = True  # audio that is not taken in time is gone: holding it is bounded (hold_s)
    echo_cancel = "auto"  # "Both": echo cancellation auto/on/off (the app's setting, --echo-cancel)

    def resolve(self, source: str) -> list[tuple]:
        """[(SourceSpec pinned to a device, device description)]; raises CaptureError."""
        from ..capture.devices import server_state
        from ..capture.sources import parse_sources, resolve_initial
        from ..errors import CaptureError

        specs = parse_sources(source, echo=self.echo_cancel)
        state = server_state()
        if len(specs) == 1:
            spec, dev = resolve_initial(specs[0], state)
            return [(spec, dev.description)]
        out, errors = [], []
        for spec in specs:  # in a pair, a half that cannot be had must not cost the other one:
            try:  # it stays unresolved, and opening it raises the same error for that half alone
                pinned, dev = resolve_initial(spec, state)
                out.append((pinned, dev.description))
            except CaptureError as exc:
                log.warning("%s cannot be resolved now", spec.label, exc_info=True)
                errors.append(exc)
                out.append((spec, f"{spec} (not available now)"))
        if len(errors) == len(specs):
            raise errors[0]
        return out

    def open(self, spec, on_block: Callable, on_event: Callable) -> Stoppable:
        """A started capture (has ``stop()``); raises CaptureError."""
        from ..capture.capture import Capture

        return Capture(spec, on_block, on_event).start()

    def watch(self, on_event: Callable) -> Stoppable:
        """Something with ``stop()`` that publishes ``DevicesChanged`` and ``AppsChanged``."""
        from ..capture.apps import watch_devices_and_apps

        return watch_devices_and_apps(on_event)


@dataclass(frozen=True)
class FileSpec:
    label: str
    path: Path


class FileAudio:
    """One audio file (any format ``audio_file`` reads) as the session's only source.

    ``realtime``: deliver it no faster than it plays, like a live source; else as fast as it
    is read (the engine queues it). Raises AudioFileError at once for an unreadable file.
    """

    journal_kind = "transcribe"
    live = False  # can wait: held in full while the engine is not ready

    def __init__(self, path, realtime: bool = False) -> None:
        self.info = probe(path)
        self.realtime = realtime

    def resolve(self, source: str = "") -> list[tuple]:
        return [(FileSpec(self.info.path.name, self.info.path), str(self.info.path))]

    def open(self, spec: FileSpec, on_block: Callable, on_event: Callable) -> Stoppable:
        return FileReader(spec, self.realtime, on_block, on_event).start()

    def watch(self, on_event: Callable) -> Stoppable:
        return _NoWatch()


class _NoWatch:
    def stop(self) -> None:
        pass


class FileReader:
    """Reads a file on its own thread into ``on_block`` (``AudioBlock``s), then publishes
    ``SourceEnded``; ``stop()`` ends it early (``CaptureStopped``)."""

    def __init__(self, spec: FileSpec, realtime: bool, on_block: Callable,
                 on_event: Callable) -> None:
        self.spec, self.realtime = spec, realtime
        self._on_block, self._on_event = on_block, on_event
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="voxcap-file", daemon=True)
        self.samples = 0

    def start(self) -> FileReader:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(10)
        self._on_event(CaptureStopped(self.spec.label, self.samples / SAMPLE_RATE, 0, 0, 0.0, 0,
                                      f"{self.spec.label}: stopped"))

    def _run(self) -> None:
        label = self.spec.label
        error = ""
        t0 = time.time()
        try:
            for block in iter_blocks(self.spec.path, STEP_SECONDS if self.realtime else 0.5):
                if self._stop.is_set():
                    return
                at = t0 + self.samples / SAMPLE_RATE
                if self.realtime:  # a live source delivers audio no faster than it plays
                    delay = at - time.time()
                    if delay > 0 and self._stop.wait(delay):
                        return
                self._on_block(AudioBlock(label, block, at if self.realtime else time.time()))
                self.samples += block.size
        except Exception as exc:  # the session ends with the reason, text kept
            log.warning("reading %s failed", self.spec.path, exc_info=True)
            error = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        seconds = self.samples / SAMPLE_RATE
        self._on_event(SourceEnded(label, seconds, error,
                                   f"{label}: {'stopped: ' + error if error else 'end of the audio'}"
                                   f" after {seconds:.1f} s"))
