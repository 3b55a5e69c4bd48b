"""Translation model jobs in a thread of their own, for a front end that must not wait (the app's
Settings → Translation and its first-use offer): look up the index, download pairs (progress,
cancel, resume), install from a file or a folder. Qt-free; each job reports through ``publish``
from its thread, as plain events (the app posts them to its GUI thread).

    jobs = ModelJobs(models_dir, publish=bridge.post)
    jobs.look_up()                       # -> IndexLookedUp
    jobs.download([entry, ...])          # -> ModelProgress ..., ModelJobDone
    jobs.install_from(Path("/media/usb"))  # -> ModelJobDone
    jobs.cancel()                        # the download stops; what was fetched is kept

One download or install at a time (``busy``); a look-up may run beside it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import VoxcapError
from .models import DownloadCancelled, IndexEntry, PackageDownload, Progress, fetch_index, install_from
from .package import Pair

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class IndexLookedUp:
    """The index's pairs, or why it could not be read (``error``, ``fix``: one line each)."""

    entries: tuple[IndexEntry, ...] = ()
    error: str = ""
    fix: str = ""


@dataclass(frozen=True)
class ModelProgress:
    name: str  # the pair, "fr-en"
    step: int  # 1-based, of ``steps`` pairs in this job
    steps: int
    progress: Progress


@dataclass(frozen=True)
class ModelJobDone:
    """A download or install ended: the pairs it installed, or why it stopped."""

    installed: tuple[str, ...] = ()
    error: str = ""
    fix: str = ""
    cancelled: bool = False


class ModelJobs:
    def __init__(self, models_dir: Path, publish: Callable[[object], None],
                 index_url: str | None = None) -> None:
        self.models_dir = models_dir
        self.publish = publish
        self.index_url = index_url
        self._download: PackageDownload | None = None
        self._cancelled = threading.Event()
        self._busy = threading.Lock()

    @property
    def busy(self) -> bool:
        return self._busy.locked()

    def look_up(self) -> None:
        def work() -> None:
            try:
                self._tell(IndexLookedUp(tuple(fetch_index(self.index_url))))
            except VoxcapError as exc:
                self._tell(IndexLookedUp(error=exc.message, fix=exc.fix))
            except Exception as exc:  # shown as one line, never a silent stop
                log.exception("reading the translation model index failed")
                self._tell(IndexLookedUp(error=f"The model index could not be read ({exc!r}).",
                                           fix="try again; the log has the details"))
        threading.Thread(target=work, daemon=True, name="voxcap-model-index").start()

    def download(self, entries: list[IndexEntry]) -> bool:
        """Download and install ``entries`` in turn; False (nothing started) while busy."""
        return self._start(lambda: self._download_all(entries))

    def install_from(self, path: Path) -> bool:
        """Install the archive ``path``, or those in the folder ``path``; False while busy."""
        return self._start(lambda: tuple(p.name for p in install_from(path, self.models_dir)))

    def cancel(self) -> None:
        self._cancelled.set()
        download = self._download
        if download is not None:
            download.cancel()

    # ------------------------------------------------------------------------------------------
    def _tell(self, event: object) -> None:
        try:
            self.publish(event)
        except Exception:  # a listener gone (a closed window): the job's end is in the log
            log.warning("a translation model event found no listener: %r", event, exc_info=True)

    def _progress(self, name: str, step: int, steps: int) -> Callable[[Progress], None]:
        def tell(p: Progress) -> None:
            self._tell(ModelProgress(name, step, steps, p))
        return tell

    def _start(self, job: Callable[[], tuple[str, ...]]) -> bool:
        if not self._busy.acquire(blocking=False):
            return False
        self._cancelled.clear()

        def work() -> None:
            try:
                done = ModelJobDone(installed=job())
            except DownloadCancelled as exc:
                done = ModelJobDone(error=exc.message, fix=exc.fix, cancelled=True)
            except VoxcapError as exc:
                done = ModelJobDone(error=exc.message, fix=exc.fix)
            except Exception as exc:  # shown as one line, never a silent stop
                log.exception("a translation model job failed")
                done = ModelJobDone(error=f"Installing the model failed ({exc!r}).",
                                    fix="try again; the log has the details")
            self._download = None
            self._busy.release()  # before it is told: whoever hears it may start the next
            self._tell(done)
        threading.Thread(target=work, daemon=True, name="voxcap-model-job").start()
        return True

    def _download_all(self, entries: list[IndexEntry]) -> tuple[str, ...]:
        done: list[Pair] = []
        for step, entry in enumerate(entries, 1):
            if self._cancelled.is_set():
                raise DownloadCancelled("Download cancelled; what was fetched is kept.",
                                        "download it again to resume")
            self._download = PackageDownload(entry, self.models_dir,
                                             on_progress=self._progress(entry.name, step, len(entries)))
            if self._cancelled.is_set():  # cancelled while it was being made
                self._download.cancel()
            done.append(self._download.run())
        return tuple(p.name for p in done)
