"""Translation models: the package index, download (resumable, checksummed), install, remove.

    index = fetch_index(url)                       # [IndexEntry], Argos Translate's index format
    entry = find_entry(index, "fr", "en")
    pair = PackageDownload(entry, models_dir, on_progress=print).run()   # installed Pair
    install_archive(Path("translate-fr_en-1_9.argosmodel"), models_dir)  # offline, from a file
    install_from(Path("/media/usb"), models_dir)   # every archive (or package folder) there
    needed_entries(index, installed_pairs(models_dir), "fr", "de")   # what a route still lacks

The index is Argos Translate's (a JSON list of packages with ``from_code``, ``to_code``,
``package_version`` and ``links``); an entry may also carry ``size`` and ``sha256``, which are
then checked. A download goes to ``.downloads/NAME.part`` under the models folder and continues
there with an HTTP range request after a break or a cancel; the archive is checked (SHA-256
when listed, the zip's own CRCs always), unpacked beside the installed pairs and renamed into
place only when it loads as a package, so a half-downloaded or corrupt one is never installed.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..setting_refs import ref
from .languages import PIVOT
from .package import Pair, TranslationModelError, installed_pairs, read_package, route

log = logging.getLogger(__name__)

DEFAULT_INDEX = "https://raw.githubusercontent.com/argosopentech/argospm-index/main/index.json"
INDEX_ENV = "VOXCAP_TRANSLATE_INDEX"
DOWNLOADS = ".downloads"
CHUNK = 1 << 16


def default_models_dir() -> Path:
    from .. import paths

    return paths.data_dir() / "translation-models"


def index_url(url: str | None = None) -> str:
    return url or os.environ.get(INDEX_ENV) or DEFAULT_INDEX


@dataclass(frozen=True)
class IndexEntry:
    source: str
    target: str
    version: str
    links: tuple[str, ...]
    size: int = 0  # bytes, when the index says
    sha256: str = ""

    @property
    def name(self) -> str:
        return f"{self.source}-{self.target}"

    @property
    def file_name(self) -> str:
        return f"translate-{self.source}_{self.target}-{self.version.replace('.', '_')}.argosmodel"


@dataclass(frozen=True)
class Progress:
    done_bytes: int
    total_bytes: int  # 0 when unknown
    stage: str  # downloading, verifying, installing, done


class DownloadCancelled(TranslationModelError):
    """Cancelled; what was fetched is kept for a resume."""


def _open(url: str, headers: dict[str, str] | None = None, timeout_s: float = 30.0):
    request = urllib.request.Request(url, headers={"User-Agent": "voxcap", **(headers or {})})
    try:
        return urllib.request.urlopen(request, timeout=timeout_s)
    except urllib.error.HTTPError as exc:
        raise TranslationModelError(f"{url} answered HTTP {exc.code}.",
                                    f"try again later, or install {ref('models_from_file')}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise TranslationModelError(f"Cannot reach {url}: {getattr(exc, 'reason', exc)}.",
                                    f"check the network (or {ref('models_index')}), or install "
                                    f"{ref('models_from_file')}") from None


def parse_index(data: bytes) -> list[IndexEntry]:
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise TranslationModelError(f"The translation model index is unreadable ({exc}).",
                                    f"check {ref('models_index')} (a JSON list of packages)") from None
    entries = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, dict) or item.get("type", "translate") != "translate":
            continue
        try:
            entries.append(IndexEntry(str(item["from_code"]), str(item["to_code"]),
                                      str(item.get("package_version", "")),
                                      tuple(str(u) for u in item.get("links", ())),
                                      int(item.get("size") or 0), str(item.get("sha256") or "")))
        except (KeyError, TypeError, ValueError):
            log.info("index entry left out: %r", item)
    return entries


def fetch_index(url: str | None = None) -> list[IndexEntry]:
    with _open(index_url(url)) as resp:
        return parse_index(resp.read())


def find_entry(index: list[IndexEntry], source: str, target: str) -> IndexEntry:
    found = [e for e in index if (e.source, e.target) == (source, target) and e.links]
    if not found:
        have = ", ".join(sorted({e.name for e in index})) or "none"
        raise TranslationModelError(f"The index has no {source}-{target} translation model.",
                                    f"pick one it has ({have}), or go through English "
                                    f"({source}-en and en-{target})")
    return max(found, key=lambda e: [int(x) if x.isdigit() else 0 for x in e.version.split(".")])


def needed_entries(index: list[IndexEntry], installed: dict[tuple[str, str], Pair], source: str,
                   target: str) -> list[IndexEntry]:
    """What the index must supply for ``source`` -> ``target``: nothing when a route is installed,
    else the direct pair when the index has it, else the missing half or halves through English."""
    try:
        route(installed, source, target)
        return []
    except TranslationModelError:
        pass
    try:
        return [find_entry(index, source, target)]
    except TranslationModelError as direct:
        if PIVOT in (source, target):
            raise
        halves = [(s, t) for s, t in ((source, PIVOT), (PIVOT, target)) if (s, t) not in installed]
        try:
            return [find_entry(index, s, t) for s, t in halves]
        except TranslationModelError:
            raise TranslationModelError(
                f"The index has no {source}-{target} translation model, nor "
                f"{' and '.join(f'{s}-{t}' for s, t in halves)} to go through English.",
                f"install them {ref('models_from_file')}, or use {ref('models_index')}") from direct


def _disk_error(exc: OSError, where: Path, need: int = 0) -> TranslationModelError:
    if exc.errno == errno.ENOSPC:
        size = f" (the model needs about {need / 1e6:.0f} MB)" if need else ""
        return TranslationModelError(f"The disk is full: cannot write {where}{size}.",
                                     "free some space, then run the same download again "
                                     "(it resumes)")
    return TranslationModelError(f"Cannot write {where}: {exc.strerror or exc}.",
                                 f"pick a folder you can write to ({ref('models_folder')})")


def install_archive(archive: Path, models_dir: Path) -> Pair:
    """Unpack an ``.argosmodel`` into ``models_dir`` (replacing that pair), checked first."""
    try:
        with zipfile.ZipFile(archive) as z:
            bad = z.testzip()
            if bad is not None:
                raise TranslationModelError(f"{archive.name} is corrupt ({bad} fails its check).",
                                            "delete it and download it again")
            try:
                models_dir.mkdir(parents=True, exist_ok=True)
                staging = Path(tempfile.mkdtemp(prefix=".install-", dir=models_dir))
                z.extractall(staging)
            except OSError as exc:
                raise _disk_error(exc, models_dir, archive.stat().st_size * 2) from None
    except (zipfile.BadZipFile, EOFError) as exc:
        raise TranslationModelError(f"{archive.name} is not a complete translation package ({exc}).",
                                    "delete it and download it again") from None
    try:
        tops = [p for p in staging.iterdir() if p.is_dir()]
        pair = read_package(tops[0] if len(tops) == 1 else staging)
        final = models_dir / f"{pair.source}_{pair.target}"
        if final.exists():
            shutil.rmtree(final)
        os.replace(pair.folder, final)
        return read_package(final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def install_from(path: Path, models_dir: Path) -> list[Pair]:
    """Install an ``.argosmodel`` file, or every one in a folder (and any package folders there:
    an offline copy); raises ``TranslationModelError`` when there is nothing to install."""
    if path.is_file():
        return [install_archive(path, models_dir)]
    if not path.is_dir():
        raise TranslationModelError(f"{path} does not exist.", "pick the folder or file you copied "
                                                               "the models to")
    pairs = [install_archive(a, models_dir) for a in sorted(path.glob("*.argosmodel"))]
    for folder in installed_pairs(path).values():
        final = models_dir / f"{folder.source}_{folder.target}"
        if final.resolve() != folder.folder.resolve():
            try:
                shutil.rmtree(final, ignore_errors=True)
                shutil.copytree(folder.folder, final)
            except OSError as exc:
                raise _disk_error(exc, final, folder.disk_bytes()) from None
            pairs.append(read_package(final))
    if not pairs:
        raise TranslationModelError(f"{path} has no translation models (.argosmodel files or "
                                    "package folders).", "pick the folder you copied them to, "
                                                         "or download them")
    return pairs


_RUNNING: set[Path] = set()  # the .part files being written in this process
_RUNNING_LOCK = threading.Lock()


class PackageDownload:
    """One pair from the index into ``models_dir``; ``cancel()`` from any thread."""

    def __init__(self, entry: IndexEntry, models_dir: Path, *,
                 on_progress: Callable[[Progress], None] | None = None) -> None:
        self.entry = entry
        self.models_dir = models_dir
        self.on_progress = on_progress or (lambda p: None)
        self._cancel = threading.Event()

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def part(self) -> Path:
        return self.models_dir / DOWNLOADS / (self.entry.file_name + ".part")

    def run(self) -> Pair:
        with _RUNNING_LOCK:  # two windows of the app could ask for the same pair
            if self.part in _RUNNING:
                raise TranslationModelError(f"{self.entry.name} is already being downloaded.",
                                            "wait for that download to end")
            _RUNNING.add(self.part)
        try:
            return self._run()
        finally:
            with _RUNNING_LOCK:
                _RUNNING.discard(self.part)

    def _run(self) -> Pair:
        part = self.part
        try:
            part.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _disk_error(exc, part.parent) from None
        last_error: TranslationModelError | None = None
        for url in self.entry.links:
            try:
                self._fetch(url, part)
                break
            except DownloadCancelled:
                raise
            except TranslationModelError as exc:
                last_error = exc
                log.info("download from %s failed: %s", url, exc.message)
        else:
            raise last_error or TranslationModelError(f"The index lists no file for {self.entry.name}.",
                                                      f"try another index ({ref('models_index')})")
        self._verify(part)
        self.on_progress(Progress(part.stat().st_size, part.stat().st_size, "installing"))
        archive = part.with_name(self.entry.file_name)
        os.replace(part, archive)
        try:
            pair = install_archive(archive, self.models_dir)
        finally:
            archive.unlink(missing_ok=True)
        self.on_progress(Progress(self.entry.size, self.entry.size, "done"))
        return pair

    def _verify(self, part: Path) -> None:
        have = part.stat().st_size
        if self.entry.size and have != self.entry.size:
            raise TranslationModelError(f"{self.entry.name}: got {have} of {self.entry.size} bytes.",
                                        "run the same download again (it resumes)")
        if not self.entry.sha256:
            return
        self.on_progress(Progress(have, have, "verifying"))
        digest = hashlib.sha256()
        with open(part, "rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
        if digest.hexdigest() != self.entry.sha256.lower():
            part.unlink()
            raise TranslationModelError(f"The {self.entry.name} download is corrupt (its SHA-256 "
                                        "does not match the index's); it was deleted.",
                                        "download it again")

    def _read(self, resp) -> bytes:
        try:
            return resp.read(CHUNK)
        except OSError as exc:  # the network, not the disk
            raise TranslationModelError(f"The {self.entry.name} download broke off ({exc}).",
                                        "run the same download again (it resumes)") from None

    def _fetch(self, url: str, part: Path) -> None:
        have = part.stat().st_size if part.exists() else 0
        if self.entry.size and have >= self.entry.size:
            return
        with _open(url, {"Range": f"bytes={have}-"} if have else None) as resp:
            if have and resp.status != 206:  # the server ignored the range: start over
                have = 0
            length = int(resp.headers.get("Content-Length") or 0)
            total = self.entry.size or (have + length if length else 0)
            last = 0.0
            try:
                with open(part, "ab" if have else "wb") as out:
                    while chunk := self._read(resp):
                        if self._cancel.is_set():
                            raise DownloadCancelled("Download cancelled; what was fetched is kept.",
                                                    "run the same download again to resume it")
                        out.write(chunk)
                        have += len(chunk)
                        now = time.monotonic()
                        if now - last >= 0.2:
                            last = now
                            self.on_progress(Progress(have, total, "downloading"))
            except OSError as exc:  # writing (a broken connection is raised by _read)
                raise _disk_error(exc, part, total) from None
        self.on_progress(Progress(have, total, "downloading"))
