"""Whether a model folder's weights file can be loaded, read from its header only (cheap, also for
the real 9 GB file): unreadable, unfinished download, truncated, or tensors that do not fit
params.json. vLLM would otherwise stop at the first start with a traceback deep in its loader
(or, for a short file, a safetensors error that names no file)."""

from __future__ import annotations

import json
import logging
import struct
from pathlib import Path

log = logging.getLogger(__name__)

PART_SUFFIXES = (".part", ".incomplete")
MAX_HEADER = 100 * 2**20


def unfinished_download(path: Path, name: str) -> Path | None:
    """The partial file a download of ``name`` left in ``path`` (voxcap's own ``NAME.part``, or
    another downloader's ``NAME.incomplete``), if any."""
    for suffix in PART_SUFFIXES:
        part = path / f"{name}{suffix}"
        if part.is_file():
            return part
    return None


def read_header(path: Path) -> tuple[dict, int]:
    """(header, header length) of a safetensors file; ValueError or OSError saying what is wrong."""
    size = path.stat().st_size
    with open(path, "rb") as fh:
        head = fh.read(8)
        if len(head) < 8:
            raise ValueError("the file is too short to be a safetensors file")
        (n,) = struct.unpack("<Q", head)
        if n > min(size, MAX_HEADER):
            raise ValueError("its header is damaged")
        header = json.loads(fh.read(n))
    if not isinstance(header, dict):
        raise ValueError("its header is damaged")
    return header, n


def weights_problem(path: Path, params: dict | None = None) -> str | None:
    """Why the safetensors file ``path`` cannot be loaded, or None. With ``params`` (params.json),
    its tensors are also checked against what the model needs (names and shapes)."""
    try:
        header, n = read_header(path)
        size = path.stat().st_size
    except (OSError, ValueError) as exc:
        log.info("weights file %s unusable", path, exc_info=True)
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return f"it cannot be read ({detail})" if isinstance(exc, OSError) else str(exc)
    tensors = {k: t for k, t in header.items() if k != "__metadata__" and isinstance(t, dict)}
    ends = [t["data_offsets"][1] for t in tensors.values() if "data_offsets" in t]
    expected = 8 + n + max(ends, default=0)
    if size < expected:
        return (f"it is incomplete ({size / 1e9:.2f} of {expected / 1e9:.2f} GB): the download "
                "did not finish")
    if params is None:
        return None
    from .tiny_weights import tensor_shapes  # numpy: not needed for the checks above (doctor -S)

    try:
        wanted = tensor_shapes(params)
    except (KeyError, TypeError):  # params.json without what the shapes need: vLLM will say
        log.warning("cannot derive the weights' shapes from params.json", exc_info=True)
        return None
    missing = sorted(set(wanted) - set(tensors))
    wrong = sorted(k for k in wanted.keys() & tensors.keys()
                   if tuple(tensors[k].get("shape", ())) != wanted[k])
    extra = sorted(set(tensors) - set(wanted))
    if extra:  # vLLM decides about those (e.g. quantisation scales): noted, not refused
        log.warning("weights file %s has %d tensors this model does not use, e.g. %s",
                    path, len(extra), extra[:3])
    if wrong:
        k = wrong[0]
        return (f"{len(wrong)} tensor(s) have the wrong shape for this params.json, e.g. {k}: "
                f"{list(tensors[k].get('shape', []))}, the model needs {list(wanted[k])}")
    if missing:
        return (f"{len(missing)} of the {len(wanted)} tensors the model needs are missing, "
                f"e.g. {missing[0]}")
    return None
