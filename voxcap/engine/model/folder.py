"""Validate a Voxtral Realtime model directory and prepare its tokenizer for a chosen delay.

The user's model directory is never modified: a different transcription delay is applied by
giving vLLM a copy of tekken.json (in voxcap's cache) with that delay.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from ...errors import ModelDirError
from ...framing import DEFAULT_DELAY_MS
from ...setting_refs import ref
from .weights_check import unfinished_download, weights_problem

MODEL_ID = "mistralai/Voxtral-Mini-4B-Realtime-2602"
# What vLLM 0.32 assumes when params.json has no max_position_embeddings (MistralConfigParser ->
# _maybe_retrieve_max_pos_from_hf). It finds that out by parsing a config.json that a Mistral-format
# folder does not have, which fails, sleeps 2 s and fails again: 2 s and two ERROR lines per
# config parse, twice per engine start (docs/perf/startup.md).
VLLM_DEFAULT_MAX_POSITIONS = 128_000
GET_MODEL = (
    f"download {MODEL_ID} {ref('get_model')}, or run `voxcap make-tiny-model DIR` and "
    f"{ref('self_check')}"
)
WEIGHT_FILES = ("consolidated.safetensors",)


@dataclass(frozen=True)
class ModelInfo:
    path: Path
    params: dict
    audio: dict
    has_weights: bool

    @property
    def delay_ms(self) -> int:
        return int(self.audio.get("transcription_delay_ms") or DEFAULT_DELAY_MS)

    @property
    def max_model_len(self) -> int:
        """The longest session vLLM allows for this model: params.json's max_position_embeddings,
        else vLLM's fallback (VLLM_DEFAULT_MAX_POSITIONS), capped by model_max_length."""
        value = self.params.get("max_position_embeddings")
        if not (isinstance(value, int) and value > 0):
            value = VLLM_DEFAULT_MAX_POSITIONS
        limit = self.params.get("model_max_length")
        return min(value, limit) if isinstance(limit, int) and limit > 0 else value


def _read_json(path: Path, what: str) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelDirError(f"{what} is missing: {path}", GET_MODEL) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelDirError(f"{what} is corrupt ({path}): {exc}",
                            "download the model again; the file is damaged") from None
    if not isinstance(data, dict):
        raise ModelDirError(f"{what} is corrupt ({path}): not a JSON object",
                            "download the model again; the file is damaged")
    return data


def inspect_model_dir(directory: str | Path, dummy_weights: bool = False) -> ModelInfo:
    """Check that ``directory`` holds a Voxtral Realtime model; raise ModelDirError if not."""
    path = Path(directory).expanduser()
    if not path.exists():
        raise ModelDirError(f"Model directory does not exist: {path}", GET_MODEL)
    if not path.is_dir():
        raise ModelDirError(f"Model path is not a directory: {path}", GET_MODEL)
    try:
        empty = not any(path.iterdir())
    except OSError as exc:
        raise ModelDirError(f"Model directory cannot be read ({exc.strerror or exc}): {path}",
                            "give voxcap's user read access to the folder (and its files), or "
                            "choose another folder") from None
    if empty:
        raise ModelDirError(f"Model directory is empty: {path}", GET_MODEL)
    params = _read_json(path / "params.json", "params.json")
    missing = [k for k in ("dim", "n_layers", "n_heads", "vocab_size") if k not in params]
    if missing:
        raise ModelDirError(f"params.json lacks {', '.join(missing)}: not a Mistral model config",
                            GET_MODEL)
    if "whisper_model_args" not in (params.get("multimodal") or {}):
        raise ModelDirError("params.json has no audio encoder (multimodal.whisper_model_args): "
                            "this is not a Voxtral model", GET_MODEL)
    tekken = _read_json(path / "tekken.json", "tekken.json")
    audio = tekken.get("audio")
    if not isinstance(audio, dict):
        raise ModelDirError("tekken.json has no audio section: this tokenizer is not a Voxtral one",
                            GET_MODEL)
    if audio.get("transcription_format") != "streaming":
        raise ModelDirError("tekken.json describes an offline (non-streaming) Voxtral model; "
                            "live captions need Voxtral Realtime", GET_MODEL)
    has_weights = any((path / f).is_file() for f in WEIGHT_FILES)
    if not dummy_weights:
        _check_weights(path, params, has_weights)
    if not has_weights and not dummy_weights:
        raise ModelDirError(
            f"No weights (consolidated.safetensors) in {path}",
            f"{GET_MODEL}; random weights are never used {ref('unless_dummy')}",
        )
    return ModelInfo(path=path, params=params, audio=audio, has_weights=has_weights)


def _check_weights(path: Path, params: dict, has_weights: bool) -> None:
    """ModelDirError when the weights vLLM is to load are unfinished, unreadable, truncated or do
    not fit params.json (their header is read, not the tensors)."""
    name = WEIGHT_FILES[0]
    if not has_weights:
        part = unfinished_download(path, name)
        if part is not None:
            raise ModelDirError(
                f"The weights are not downloaded yet: only {part.name} "
                f"({part.stat().st_size / 1e9:.2f} GB so far) is in {path}",
                "finish the download (the app resumes it where it stopped), then start again")
        return
    problem = weights_problem(path / name, params)
    if problem:
        raise ModelDirError(f"The weights {path / name} cannot be used: {problem}",
                            "download the model again (the app resumes a broken download); "
                            "the other files of the folder are fine")


def tokenizer_dir_for_delay(info: ModelInfo, delay_ms: int | None, cache_dir: Path) -> Path:
    """Directory whose tekken.json vLLM should use: the model's own, or a copy with ``delay_ms``."""
    if delay_ms is None or delay_ms == info.delay_ms:
        return info.path
    source = (info.path / "tekken.json").read_bytes()
    tekken = json.loads(source)
    tekken["audio"]["transcription_delay_ms"] = delay_ms
    digest = hashlib.sha256(source).hexdigest()[:16]
    out = cache_dir / "tokenizers" / f"{digest}-delay{delay_ms}"
    target = out / "tekken.json"
    if not target.exists():
        out.mkdir(parents=True, exist_ok=True)
        tmp = out / "tekken.json.tmp"
        tmp.write_text(json.dumps(tekken), encoding="utf-8")
        tmp.replace(target)
    return out


def model_dir_for_vllm(info: ModelInfo, cache_dir: Path, dtype: str = "") -> Path:
    """Directory vLLM should load: a view of the model folder whose entries are links to the
    model's files but for params.json, which says

    * max_position_embeddings (vLLM's own fallback value, so the config is the same) where the
      model's does not: vLLM's way of finding it costs 4 s of failing retries per start;
    * ``dtype`` (the weights' type, which vLLM otherwise reads from the weights file's header):
      the config, and so the compile cache's key, is then the same before the weights are
      there, when the engine is prepared during the download (engine/inprocess/prepare.py).

    The view's path depends on the model folder's path and params.json only, so the compile
    cache found at one start is found at the next."""
    source = (info.path / "params.json").read_bytes()
    params = json.loads(source)
    params.setdefault("max_position_embeddings", VLLM_DEFAULT_MAX_POSITIONS)
    if dtype:
        params["dtype"] = dtype
    digest = hashlib.sha256(source + str(info.path.resolve()).encode()).hexdigest()[:16]
    out = cache_dir / "model-views" / digest
    out.mkdir(parents=True, exist_ok=True)
    target = out / "params.json"
    text = json.dumps(params, indent=2)
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        tmp = out / f"params.json.{os.getpid()}.tmp"
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(target)
    # links follow the model folder as it is now (files added or removed since the last start)
    wanted = {p.name for p in info.path.iterdir() if p.name != "params.json"}
    # another voxcap (serve, the app, a test) may be making the same view at the same moment
    for link in out.iterdir():
        if link.is_symlink() and link.name not in wanted:
            link.unlink(missing_ok=True)
    for name in wanted:
        link = out / name
        if not link.is_symlink():
            try:
                link.symlink_to(info.path.resolve() / name)
            except FileExistsError:
                if not link.is_symlink():
                    raise
    return out

