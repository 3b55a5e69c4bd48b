"""Download the model from the Hugging Face Hub: progress, cancel, resume. No Qt here.

    dl = ModelDownload("mistralai/Voxtral-Mini-4B-Realtime-2602", "~/models/voxtral-realtime",
                       on_progress=print)          # DownloadProgress, from the download's thread
    dl.run()          # blocks; returns the folder, raises DownloadError / DownloadCancelled
    dl.cancel()       # from any thread: stops within one chunk; what was fetched is kept

Only the files the engine needs are fetched (``params.json``, ``tekken.json``,
``consolidated.safetensors``: the model in Mistral's format, not the duplicate Transformers
shards). Each file is written to ``NAME.part`` and renamed when complete and verified (size,
and the SHA-256 the Hub lists for large files); a later ``run()`` continues a ``.part`` with an
HTTP range request, so a cancelled or broken download resumes instead of starting over. The
Hub's address comes from ``endpoint`` (default ``$HF_ENDPOINT`` or https://huggingface.co) and a
token from ``$HF_TOKEN`` or the one ``hf auth login`` saved.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from ..errors import VoxcapError

log = logging.getLogger(__name__)

MODEL_REPO = "mistralai/Voxtral-Mini-4B-Realtime-2602"
NEEDED_FILES = ("params.json", "tekken.json", "consolidated.safetensors")
CHUNK = 1 << 20


class DownloadError(VoxcapError):
    """The download failed (network, disk, server); what was fetched is kept for a resume."""


class DownloadCancelled(VoxcapError):
    """Cancelled by the user; what was fetched is kept for a resume."""


@dataclass(frozen=True)
class RemoteFile:
    path: str
    size: int
    sha256: str | None  # the Hub lists it for LFS files


@dataclass(frozen=True)
class DownloadProgress:
    done_bytes: int
    total_bytes: int
    file: str
    bytes_per_s: float
    stage: str = "downloading"  # listing, downloading, verifying, done

    @property
    def fraction(self) -> float:
        return self.done_bytes / self.total_bytes if self.total_bytes else 0.0


def default_model_dir() -> Path:
    """Where the model goes unless the person picks a folder (the app looks there too)."""
    from .. import paths

    return paths.data_dir() / "models" / MODEL_REPO.split("/")[-1]


def default_endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


def _token() -> str | None:
    token = os.environ.get("HF_TOKEN")
    if token:
        return token
    try:
        from huggingface_hub import get_token
    except ImportError:
        return None
    try:
        return get_token()
    except Exception:  # no token is fine for a public model
        log.info("no Hugging Face token", exc_info=True)
        return None


class ModelDownload:
    def __init__(self, repo: str, target: str | Path, *, endpoint: str | None = None,
                 revision: str = "main", files: tuple[str, ...] = NEEDED_FILES,
                 on_progress: Callable[[DownloadProgress], None] | None = None,
                 timeout_s: float = 30.0) -> None:
        self.repo = repo
        self.target = Path(target).expanduser()
        self.endpoint = (endpoint or default_endpoint()).rstrip("/")
        self.revision = revision
        self.files = files
        self.on_progress = on_progress or (lambda p: None)
        self.timeout_s = timeout_s
        self._cancel = threading.Event()
        self._token = _token()

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    # --------------------------------------------------------------------------------------
    def _request(self, url: str, headers: dict | None = None):
        h = {"User-Agent": "voxcap"}
        if self._token:
            h["Authorization"] = f"Bearer {self._token}"
        h.update(headers or {})
        try:
            return urllib.request.urlopen(urllib.request.Request(url, headers=h),
                                          timeout=self.timeout_s)
        except urllib.error.HTTPError as exc:
            if exc.code in (401, 403):
                from ..paths import shipped_command

                raise DownloadError(f"The Hub refused access to {self.repo} (HTTP {exc.code}).",
                                    "accept the model's terms on its Hub page and log in with "
                                    f"`{shipped_command('hf')} auth login` (or set HF_TOKEN to "
                                    "a token from huggingface.co/settings/tokens)") from None
            raise DownloadError(f"The Hub answered HTTP {exc.code} for {url}.",
                                "try again later") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise DownloadError(f"Cannot reach {self.endpoint}: {reason}.",
                                "check the network connection (or HF_ENDPOINT), then resume") from None

    def list_files(self) -> list[RemoteFile]:
        url = f"{self.endpoint}/api/models/{self.repo}/tree/{quote(self.revision, safe='')}"
        with self._request(url) as resp:
            try:
                entries = json.loads(resp.read().decode("utf-8"))
            except ValueError as exc:
                raise DownloadError(f"The Hub's file list for {self.repo} is unreadable: {exc}",
                                    "try again later") from None
        found = {}
        for e in entries if isinstance(entries, list) else []:
            if isinstance(e, dict) and e.get("type") == "file" and e.get("path") in self.files:
                lfs = e.get("lfs") or {}
                found[e["path"]] = RemoteFile(e["path"], int(lfs.get("size") or e.get("size") or 0),
                                              lfs.get("oid") or None)
        missing = [f for f in self.files if f not in found]
        if missing:
            raise DownloadError(f"{self.repo} has no {', '.join(missing)}: not a Voxtral Realtime "
                                "model in Mistral's format", f"check the model name ({MODEL_REPO})")
        return [found[f] for f in self.files]

    def run(self) -> Path:
        self.on_progress(DownloadProgress(0, 0, "", 0.0, "listing"))
        files = self.list_files()
        try:
            self.target.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DownloadError(f"Cannot create {self.target}: {exc.strerror}",
                                "choose a folder you can write to") from None
        total = sum(f.size for f in files)
        done_before = 0
        started, start_bytes = time.monotonic(), None
        for f in files:
            final = self.target / f.path
            if final.exists() and final.stat().st_size == f.size:
                done_before += f.size
                continue
            part = final.with_name(final.name + ".part")
            have = part.stat().st_size if part.exists() else 0
            if have > f.size:
                part.unlink()
                have = 0
            hasher = hashlib.sha256() if f.sha256 else None
            if hasher is not None and have:
                self.on_progress(DownloadProgress(done_before, total, f.path, 0.0, "verifying"))
                with open(part, "rb") as fh:  # hash what is there, to verify the whole file
                    while chunk := fh.read(CHUNK):
                        if self._cancel.is_set():
                            raise DownloadCancelled("Download cancelled.", "resume it later")
                        hasher.update(chunk)
            if start_bytes is None:
                start_bytes = done_before + have
                started = time.monotonic()
            if have < f.size:
                self._fetch(f, part, have, hasher, done_before, total, started, start_bytes)
            if part.stat().st_size != f.size:
                raise DownloadError(f"{f.path}: got {part.stat().st_size} of {f.size} bytes.",
                                    "resume the download")
            if hasher is not None and hasher.hexdigest() != f.sha256:
                part.unlink()
                raise DownloadError(f"{f.path} is corrupt (its SHA-256 does not match the Hub's); "
                                    "it was deleted.", "download it again")
            os.replace(part, final)
            done_before += f.size
        self.on_progress(DownloadProgress(total, total, "", 0.0, "done"))
        return self.target

    def _fetch(self, f: RemoteFile, part: Path, have: int, hasher, done_before: int, total: int,
               started: float, start_bytes: int) -> None:
        url = (f"{self.endpoint}/{self.repo}/resolve/{quote(self.revision, safe='')}/"
               f"{quote(f.path)}")
        headers = {"Range": f"bytes={have}-"} if have else {}
        resp = self._request(url, headers)
        with resp:
            if have and resp.status != 206:  # the server ignored the range: start over
                have = 0
                if hasher is not None:
                    hasher.__init__()
            mode = "ab" if have else "wb"
            last_report = 0.0
            try:
                with open(part, mode) as out:
                    while True:
                        if self._cancel.is_set():
                            raise DownloadCancelled("Download cancelled; what was fetched is kept.",
                                                    "start the download again to resume it")
                        try:
                            chunk = resp.read1(CHUNK)  # what has arrived: cancel stays quick
                        except OSError as exc:
                            raise DownloadError(f"The download of {f.path} broke off: {exc}",
                                                "check the network, then resume") from None
                        if not chunk:
                            break
                        out.write(chunk)
                        if hasher is not None:
                            hasher.update(chunk)
                        have += len(chunk)
                        now = time.monotonic()
                        if now - last_report >= 0.2 or have == f.size:
                            last_report = now
                            done = done_before + have
                            rate = (done - start_bytes) / max(now - started, 1e-6)
                            self.on_progress(DownloadProgress(done, total, f.path, rate))
            except OSError as exc:
                raise DownloadError(f"Writing {part} failed: {exc.strerror or exc}",
                                    "free disk space (the model needs ~9 GB), then resume") from None
