"""vLLM's reference tokens (support/reference_tokens.py) computed once per parallel run: the
first worker to ask for a job runs it, the others wait for its file in the folder the run's
workers share (VOXCAP_CACHE_DIR, tests/conftest.py). In one process it is ``reference_tokens.start``.

A job is known by its content, not its paths (each worker writes its own copy of the tiny model
and of the audio): the model folder's files and each stream's samples are hashed. A copy that
differs in anything gets a job of its own.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import threading
from pathlib import Path

from support import reference_tokens

SHARED_DIR_ENV = "VOXCAP_CACHE_DIR"


def job_key(job: dict) -> str:
    h = hashlib.sha256()
    model = Path(job["model"])
    for f in sorted(p for p in model.rglob("*") if p.is_file()):
        h.update(f.relative_to(model).as_posix().encode())
        h.update(hashlib.sha256(f.read_bytes()).digest())
    plain = {k: v for k, v in job.items() if k != "model"}
    runs = []
    for run in plain.pop("runs"):
        streams = {name: hashlib.sha256(Path(path).read_bytes()).hexdigest()
                   for name, path in run["streams"].items()}
        runs.append({**run, "streams": streams})
    h.update(json.dumps({**plain, "runs": runs}, sort_keys=True).encode())
    return h.hexdigest()[:24]


class SharedPending:
    """``result()`` of a job that this worker runs, or that another worker of the run runs.

    The worker that runs it holds the job's lock until its output is written, which a thread
    of its own does as soon as the run ends (not when this worker's tests get to it)."""

    def __init__(self, job: dict, timeout: float, folder: Path) -> None:
        key = job_key(job)
        self._out = folder / f"reference-{key}.json"
        self._failed = folder / f"reference-{key}.failed"
        self._lock = open(folder / f"reference-{key}.lock", "a")  # closed in result()
        self._thread: threading.Thread | None = None
        self._value: dict | None = None
        self._error: BaseException | None = None
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # another worker runs it: result() waits for its lock
        if self._out.exists() or self._failed.exists():
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            return
        pending = reference_tokens.start(job, timeout)
        self._thread = threading.Thread(target=self._finish, args=(pending,), daemon=True,
                                        name=f"reference-{key}")
        self._thread.start()

    def _finish(self, pending) -> None:
        try:
            self._value = pending.result()
            tmp = self._out.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(self._value))
            tmp.replace(self._out)
        except BaseException as e:  # noqa: BLE001 (kept for result(), which raises it in the test's thread)
            self._error = e
            self._failed.write_text(f"{type(e).__name__}: {e}"[:4000])
        finally:
            fcntl.flock(self._lock, fcntl.LOCK_UN)

    def result(self) -> dict:
        if self._thread is not None:
            self._thread.join()
            self._lock.close()
            if self._error is not None:
                raise self._error
            return self._value
        fcntl.flock(self._lock, fcntl.LOCK_EX)  # the worker running it holds it until done
        fcntl.flock(self._lock, fcntl.LOCK_UN)
        self._lock.close()
        if not self._out.exists():
            why = self._failed.read_text() if self._failed.exists() else "no output"
            raise RuntimeError(f"the reference run in another worker of this run failed: {why}")
        return json.loads(self._out.read_text())


def start(job: dict, timeout: float = 900):
    """``reference_tokens.start``, shared with the run's other workers when there are any."""
    folder = os.environ.get(SHARED_DIR_ENV)
    if not os.environ.get("PYTEST_XDIST_WORKER") or not folder:
        return reference_tokens.start(job, timeout)
    Path(folder).mkdir(parents=True, exist_ok=True)
    return SharedPending(job, timeout, Path(folder))
