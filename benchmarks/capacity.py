"""How many real-time caption sessions one server keeps up with: vLLM's own server (its
defaults) and ``voxcap serve``, side by side in one run.

For each N in ``--sessions``, N websocket sessions to ``/v1/realtime`` at once, started spread
over ``--spread`` seconds, each fed ``--seconds`` of speech in real time (one 80 ms block every
80 ms), through the remote engine's own client code (voxcap/engine/remote/connection.py and
protocol.py: vLLM 0.32's realtime messages), paced here: one ``input_audio_buffer.append`` per
block, then ``commit {final: true}``; one ``transcription.delta`` per decoding step comes back,
``transcription.done`` at the end.

Measured per (server, N):

* round trip p50/p95/p99: step k of a session needs its first 9,000 samples (480 ms delay),
  then 1,280 more per step; its clock starts when the append completing that audio is handed to
  the websocket and stops when the k-th ``transcription.delta`` is read (the flush steps after
  the final commit have no audio of their own: counted, not timed);
* the same after each session's first 2 s, and the start wave's length in steps (lib/start_wave.py):
  sessions opening together queue their first steps, and whole-session percentiles mix that in;
* sessions falling behind: the median round trip over a session's last 2 s of audio above
  ``--behind-ms`` (default 250: three steps queued), or no ``transcription.done`` within the
  drain time;
* CPU of each server process (% of one core: API server, engine core, worker where the CPU
  build runs one, voxcap serve's own process), of this client, and the whole machine (others'
  work included: the figures of a shared machine are only as good as that column), over the
  window from the first session's start to the last one's end; GPU utilisation (NVML, sampled
  every 100 ms) where there is a GPU;
* the knee: the largest N whose p95 is ≤ 100 ms;
* the client's own lateness ("late ms": p95 of each block's delay behind its 80 ms slot): where
  the machine starves the client, the latencies of that run say nothing about the server;
* token parity: each session's text (its deltas joined) for the same session index and N,
  compared between the servers of the run (the same audio goes to session i everywhere).

Every configuration runs ``--repeats`` times, interleaved (each N: every server in turn, the
order reversed on alternate repeats), all servers up for the whole run, so ratios come from
the same minutes of the machine. Loopback only; everything started here is killed (process
groups and every descendant) when the benchmark ends, however it ends.

CPU build, the tiny model (host cost: the model's compute is negligible), ~10 min:

    .venv/bin/python -m benchmarks.capacity --sessions 1,2,4,8,12 --seconds 10 --repeats 2 \\
        --out capacity-cpu.json

``--server NAME=KIND [FLAGS]`` adds a configuration (KIND ``vllm`` or ``voxcap``; FLAGS are more
vLLM flags, ``VAR=VALUE`` words environment variables for it, ``serve:--OPTION=VALUE`` words
options of voxcap serve itself, and ``client:no-compression`` has the client offer no
permessage-deflate), e.g. a cut beside the defaults (docs/perf/capacity.md):
``--server "voxcap-cut=voxcap --no-enable-prefix-caching"``.
``--profile N --profile-dir DIR``: one more run at N per server with py-spy (``pip install
py-spy``) recording each server process, and the top functions of each profile printed;
``--profile-gil`` records only the thread holding the GIL (py-spy ``--gil``): beside a plain
profile of the same N it tells a thread's work from its waits for the interpreter.

H200, real shape (random weights, the GPU kit's model), owed — not run yet:

    . .gpu/kit/env.sh; M=$VOXCAP_GPU_WORK/rsmodel
    python3 -m benchmarks.capacity --model $M --dummy-weights --no-eager \\
        --sessions 1,16,32,64,96,128,160 --seconds 30 --repeats 2 --max-streams 160 \\
        --servers "vllm=vllm,voxcap-before=voxcap --enable-prefix-caching VOXCAP_VLLM_REALTIME_INPUT=0" \\
        --server "voxcap=voxcap" --server "voxcap-2api=voxcap --api-server-count 2" \\
        --out $OUT/capacity-h200.json --profile 64 --profile-dir $OUT/capacity-profiles

(``voxcap-before``: voxcap serve before its cuts, prefix caching off and the realtime-input
fix; py-spy in the kit for ``--profile``. Should voxcap serve refuse 160 streams at its default
session length, 30 s sessions fit in e.g. ``serve:--max-model-len=2048`` added to each voxcap
entry.)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import re
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil

from voxcap.framing import SAMPLE_RATE, STEP_SAMPLES, first_step_samples

from .lib.gpu import GpuSampler
from .lib.percentiles import percentile
from .lib.processes import ROOT, stop_tree, tree
from .lib.realtime_client import run_sessions
from .lib.start_wave import after_start

log = logging.getLogger("capacity")
KNEE_P95_MS = 100.0
CLIENT_LATE_MS = 20.0  # blocks sent later than this behind their slot: the client was starved
TEXT = ("The committee met on Tuesday to discuss the budget for next year. Several members "
        "asked whether the library could stay open later in the evening, and the chair promised "
        "an answer by the end of the month. After a short break they turned to the question of "
        "the new bus routes, which many parents had written about.")


# ------------------------------------------------------------------ audio ----
def speech(seconds: float, wav: str | None = None) -> np.ndarray:
    """``seconds`` of 16 kHz mono PCM16, looped to length: ``wav`` (any file soundfile reads, any
    rate or channels: resampled with soxr, no external program) or, without one, espeak-ng
    reading TEXT (through sox)."""
    if wav is not None:
        from voxcap.audio_file import read_all
        from voxcap.errors import AudioFileError

        try:
            samples = read_all(wav)
        except AudioFileError as exc:
            raise SystemExit(f"capacity: --audio {wav}: {exc.message} ({exc.fix})") from None
        pcm = np.clip(np.round(samples * 32768.0), -32768, 32767).astype(np.int16)
    else:
        pcm = _espeak(TEXT)
    n = int(seconds * SAMPLE_RATE) // STEP_SAMPLES * STEP_SAMPLES
    return np.resize(pcm, n).astype(np.int16)


def _espeak(text: str) -> np.ndarray:
    with tempfile.TemporaryDirectory(prefix="voxcap-capacity-audio-") as tmp:
        src, out = Path(tmp) / "espeak.wav", Path(tmp) / "speech16k.wav"
        try:
            subprocess.run(["espeak-ng", "-w", str(src), text], check=True, capture_output=True,
                           timeout=60)
            subprocess.run(["sox", str(src), "-r", str(SAMPLE_RATE), "-c", "1", "-b", "16", str(out)],
                           check=True, capture_output=True, timeout=60)
        except FileNotFoundError as exc:
            raise SystemExit(f"capacity: {exc.filename} is not installed: install it, or give "
                             "--audio a speech file (benchmarks/audio/speech16k.flac)") from None
        import soundfile as sf

        pcm, rate = sf.read(str(out), dtype="int16")
    assert rate == SAMPLE_RATE
    return pcm


# ---------------------------------------------------------------- servers ----
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One server under test, started in a process group of its own."""

    def __init__(self, name: str, kind: str, flags: list[str], env: dict[str, str], args,
                 workdir: Path, compression: str | None = "deflate") -> None:
        if kind not in ("vllm", "voxcap"):
            raise SystemExit(f"capacity: server kind {kind!r} is not vllm or voxcap")
        self.name, self.kind, self.args = name, kind, args
        # vLLM's CPU build reserves gpu_memory_utilization x the host's memory (0.92 by default,
        # refused beside other programs): the same small share for every server
        self.flags = (["--gpu-memory-utilization", "0.3"] if args.cpu else []) + flags
        self.port = free_port()
        self.served = "voxtral"
        self.key = "capacity-key" if kind == "voxcap" else None
        self.log_path = workdir / f"server-{name}.log"
        self.home = workdir / f"home-{name}"
        self.extra_env = env
        self.compression = compression  # what this entry's client offers (websockets' default)
        self.proc: subprocess.Popen | None = None
        self.tree: dict[int, psutil.Process] = {}

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/v1/realtime"

    def command(self) -> list[str]:
        a = self.args
        if self.kind == "vllm":  # vLLM's defaults, plus only what the model and build need
            cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", a.model,
                   "--tokenizer-mode", "mistral", "--config-format", "mistral",
                   "--load-format", "dummy" if a.dummy_weights else "mistral"]
            if a.eager:
                cmd += ["--enforce-eager"]
            if a.cpu:
                cmd += ["--dtype", "float32"]
            if any(f.startswith("serve:") for f in self.flags):
                raise SystemExit(f"capacity: {self.name}: serve: options are voxcap serve's")
            return cmd + ["--served-model-name", self.served, "--host", "127.0.0.1",
                          "--port", str(self.port), "--disable-uvicorn-access-log", *self.flags]
        cmd = [sys.executable, "-m", "voxcap.cli", "serve", "--model", a.model,
               "--max-streams", str(a.max_streams), "--served-model-name", self.served,
               "--port", str(self.port), "--api-key-env", "CAPACITY_KEY"]
        if a.eager:
            cmd += ["--eager"]
        if a.dummy_weights:
            cmd += ["--dummy-weights"]
        own = [f[len("serve:"):] for f in self.flags if f.startswith("serve:")]
        vllm = [f for f in self.flags if not f.startswith("serve:")]
        if vllm:
            cmd += ["--vllm-args=" + shlex.join(vllm)]
        return cmd + own

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("VOXCAP_VLLM_", "VOXCAP_APP_PID", "VLLM_API_KEY"))}
        env.update({"VOXCAP_CONFIG_DIR": str(self.home / "config"),
                    "VOXCAP_STATE_DIR": str(self.home / "state"),
                    "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"})
        if self.args.cpu:
            # vLLM's CPU build pins its worker to core 0 unless told otherwise: on a shared
            # machine every server would then fight over one core
            env.setdefault("VLLM_CPU_OMP_THREADS_BIND", "nobind")
            env.setdefault("OMP_NUM_THREADS", "1")
            env.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
            if self.args.cpu_as_gpu:  # the worker inside the engine core, as on one GPU
                env["VOXCAP_VLLM_CPU_AS_GPU"] = "1"
        if self.key:
            env["CAPACITY_KEY"] = self.key
        env.update(self.extra_env)
        return env

    def start(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as out:
            self.proc = subprocess.Popen(self.command(), stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=self.environment(),
                                         start_new_session=True, cwd=str(ROOT))
        log.info("%s: started pid %d, log %s", self.name, self.proc.pid, self.log_path)

    def healthy(self) -> bool:
        import urllib.request

        if self.proc is None or self.proc.poll() is not None:
            tail = self.log_path.read_text(errors="replace").splitlines()[-15:]
            raise SystemExit(f"capacity: server {self.name} exited while starting "
                             f"(log {self.log_path}):\n" + "\n".join(tail))
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as r:
                return r.status == 200
        except OSError as exc:
            log.debug("%s not up yet: %s", self.name, exc)
            return False

    def processes(self) -> dict[int, tuple[str, psutil.Process]]:
        """{pid: (role, process)} for the server's process tree, remembered for the stop."""
        out = {}
        for p in tree(self.proc.pid):
            try:
                cmd = " ".join(p.cmdline())
                name = p.name()
            except psutil.Error:
                continue
            self.tree[p.pid] = p
            if "EngineCore" in cmd or "EngineCore" in name:
                role = "engine_core"
            elif "Worker" in cmd or "Worker" in name:
                role = "worker"
            elif "voxcap.cli" in cmd:
                role = "voxcap_cli"
            elif "APIServer" in cmd or "APIServer" in name or "api_server" in cmd:
                role = "api_server"
            elif "resource_tracker" in cmd or "multiprocessing" in cmd:
                role = "helper"
            else:
                role = "other"
            out[p.pid] = (role, p)
        return out

    def stop(self) -> None:
        if self.proc is not None:
            stop_tree(self.proc, self.name, list(self.tree.values()))


def parse_server(spec: str) -> tuple[str, str, list[str], dict[str, str], str | None]:
    """``NAME=KIND [FLAGS] [VAR=VALUE ...] [client:no-compression]`` → (name, kind, vLLM flags,
    environment, the client's websocket compression)."""
    head, _, rest = spec.partition(" ")
    name, _, kind = head.partition("=")
    if not name or not kind:
        raise SystemExit(f"capacity: --server {spec!r}: expected NAME=KIND [FLAGS], e.g. "
                         "\"voxcap-cut=voxcap --no-enable-prefix-caching\"")
    flags, env, compression = [], {}, "deflate"
    for word in shlex.split(rest):
        m = re.fullmatch(r"([A-Z][A-Z0-9_]*)=(.*)", word)
        if word == "client:no-compression":  # the client offers no permessage-deflate
            compression = None
        elif word.startswith("serve:"):  # voxcap serve's own option, e.g. serve:--max-model-len=2048
            flags.append(word)
        elif m:
            env[m.group(1)] = m.group(2)
        else:
            flags.append(word)
    return name, kind, flags, env, compression


# --------------------------------------------------------------- measures ----
class Window:
    """CPU seconds of each server process, this client and the machine over a window."""

    def __init__(self, servers: list[Server]) -> None:
        self.servers = servers
        self.me = psutil.Process()

    def __enter__(self) -> Window:
        self.t0 = time.monotonic()
        self.procs = {s.name: s.processes() for s in self.servers}
        self.cpu0 = {name: {pid: _cpu(p) for pid, (_, p) in procs.items()}
                     for name, procs in self.procs.items()}
        self.me0 = _cpu(self.me)
        self.machine0 = psutil.cpu_times()
        self.load0 = os.getloadavg()
        return self

    def __exit__(self, *exc) -> None:
        self.wall = time.monotonic() - self.t0
        self.cpu = {}
        for name, procs in self.procs.items():
            roles: dict[str, float] = {}
            for pid, (role, p) in procs.items():
                used = _cpu(p) - self.cpu0[name][pid]
                roles[role] = roles.get(role, 0.0) + 100 * used / self.wall
            self.cpu[name] = {r: round(v, 1) for r, v in sorted(roles.items())}
        self.client_pct = round(100 * (_cpu(self.me) - self.me0) / self.wall, 1)
        m1 = psutil.cpu_times()
        busy = (sum(m1) - m1.idle - getattr(m1, "iowait", 0)) - \
            (sum(self.machine0) - self.machine0.idle - getattr(self.machine0, "iowait", 0))
        self.machine_pct = round(100 * busy / self.wall, 1)  # % of one core, all cores summed
        self.load = [round(x, 2) for x in self.load0 + os.getloadavg()]


def _cpu(p: psutil.Process) -> float:
    try:
        t = p.cpu_times()
        return t.user + t.system
    except psutil.Error:
        return 0.0


def pct(values: list[float], q: float) -> float | None:
    """The nearest-rank percentile at or above ``q`` (0-1), as this benchmark has reported."""
    return percentile(values, 100 * q, digits=1, method="higher")


def run_one(server: Server, n: int, audio: np.ndarray, args, gpu: GpuSampler) -> dict:
    first = first_step_samples(args.delay_ms)
    with Window([server]) as w, gpu:
        results = asyncio.run(run_sessions(server.url, server.served, server.key, audio, n,
                                           args.spread, args.drain, first, server.compression))
    rtts = [x for r in results for x in r.rtt_ms]
    late = [x for r in results for x in r.send_late_ms]
    row = {"server": server.name, "n": n, "p50_ms": pct(rtts, 0.5), "p95_ms": pct(rtts, 0.95),
           "p99_ms": pct(rtts, 0.99), "steps_timed": len(rtts),
           "behind": sum(r.behind(args.behind_ms) for r in results),
           "errors": [r.error for r in results if r.error][:3],
           "cpu_pct": w.cpu[server.name], "client_cpu_pct": w.client_pct,
           "machine_cpu_pct": w.machine_pct, "load": w.load, "gpu_util_pct": gpu.mean(),
           "send_late_p95_ms": pct(late, 0.95) if late else 0.0,
           "deltas": [len(r.deltas) for r in results], "texts": [r.text for r in results],
           "rtt_ms": [[round(x, 1) for x in r.rtt_ms] for r in results], "wall_s": round(w.wall, 1)}
    row["after_start"] = after_start(row["rtt_ms"])
    # host cost: CPU ms of each server process per stream-step (per delta received), which a
    # neighbour's load on a shared machine disturbs far less than the latencies
    steps = sum(row["deltas"]) or 1
    row["cpu_ms_per_step"] = {role: round(10 * v * w.wall / steps, 3)
                              for role, v in w.cpu[server.name].items() if v > 0}
    return row


# ---------------------------------------------------------------- profile ----
def profile(server: Server, n: int, audio: np.ndarray, args, out_dir: Path) -> dict:
    """One run at N with py-spy recording every process of the server; top functions."""
    out_dir.mkdir(parents=True, exist_ok=True)
    # beside this interpreter (a virtual environment), else on PATH (pip's scripts folder of a
    # system interpreter, e.g. /usr/local/bin on the GPU kit)
    pyspy = Path(sys.executable).with_name("py-spy")
    if not pyspy.exists():
        pyspy = Path(shutil.which("py-spy") or pyspy)
    if not pyspy.exists():
        raise SystemExit(f"capacity: --profile needs py-spy ({sys.executable} -m pip install "
                         "py-spy)")
    duration = int(args.seconds + args.spread + 2)
    spies, files = [], {}
    try:
        for pid, (role, _) in server.processes().items():
            if role in ("helper", "voxcap_cli"):
                continue
            gil = ["--gil"] if args.profile_gil else []
            path = out_dir / f"{server.name}-n{n}-{role}-{pid}{'-gil' if gil else ''}.txt"
            files[f"{role}-{pid}"] = path
            spies.append(subprocess.Popen(
                [str(pyspy), "record", "--pid", str(pid), "--duration", str(duration), *gil,
                 "--rate", "200", "--format", "raw", "--nonblocking", "--output", str(path)],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True))
        time.sleep(1.0)  # py-spy attached
        first = first_step_samples(args.delay_ms)
        results = asyncio.run(run_sessions(server.url, server.served, server.key, audio, n,
                                           args.spread, args.drain, first, server.compression))
        for spy in spies:
            try:
                spy.wait(timeout=duration + 30)
            except subprocess.TimeoutExpired:
                log.warning("py-spy %d did not finish", spy.pid)
    finally:
        for spy in spies:
            if spy.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(spy.pid, signal.SIGKILL)
                spy.wait(timeout=10)
    steps = sum(len(r.deltas) for r in results)
    summary = {"server": server.name, "n": n, "deltas": steps, "processes": {}}
    for label, path in files.items():
        if path.exists():
            summary["processes"][label] = top_functions(path, steps)
    return summary


def top_functions(path: Path, steps: int, top: int = 25) -> dict:
    """py-spy raw (collapsed) stacks → samples, and the functions with the most inclusive
    samples, each with ms of CPU per stream-step at py-spy's 200 Hz."""
    inclusive: dict[str, int] = {}
    own: dict[str, int] = {}
    total = 0
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        c = int(count)
        total += c
        # one entry per function: py-spy names a frame "func (file:line)"
        frames = [re.sub(r":\d+\)$", ")", f) for f in stack.split(";")]
        for f in set(frames[1:]):  # the thread name is frame 0
            inclusive[f] = inclusive.get(f, 0) + c
        own[frames[-1]] = own.get(frames[-1], 0) + c
    per_step = (lambda s: round(1000 * s / 200 / steps, 3)) if steps else (lambda s: None)
    return {"samples": total, "ms_per_step": per_step(total),
            "inclusive": [(f, c, per_step(c)) for f, c in
                          sorted(inclusive.items(), key=lambda x: -x[1])[:top]],
            "self": [(f, c, per_step(c)) for f, c in sorted(own.items(), key=lambda x: -x[1])[:top]]}


# ------------------------------------------------------------------- main ----
def knee(rows: list[dict]) -> int | None:
    ok = [r["n"] for r in rows if r["p95_ms"] is not None and r["p95_ms"] <= KNEE_P95_MS]
    return max(ok) if ok else None


def pooled(rows: list[dict], name: str, n: int) -> dict | None:
    mine = [r for r in rows if r["server"] == name and r["n"] == n]
    if not mine:
        return None
    rtts = [x for r in mine for s in r["rtt_ms"] for x in s]
    roles: dict[str, list[float]] = {}
    for r in mine:
        for role, v in r["cpu_pct"].items():
            roles.setdefault(role, []).append(v)
    gpu = [r["gpu_util_pct"] for r in mine if r["gpu_util_pct"] is not None]
    per_step: dict[str, list[float]] = {}
    for r in mine:
        for role, v in r["cpu_ms_per_step"].items():
            per_step.setdefault(role, []).append(v)
    return {"server": name, "n": n, "runs": len(mine), "p50_ms": pct(rtts, 0.5),
            "p95_ms": pct(rtts, 0.95), "p99_ms": pct(rtts, 0.99),
            "p95_each": [r["p95_ms"] for r in mine], "behind_each": [r["behind"] for r in mine],
            "cpu_pct": {k: round(statistics.fmean(v), 1) for k, v in roles.items()},
            "cpu_ms_per_step": {k: round(statistics.fmean(v), 3) for k, v in per_step.items()},
            "machine_cpu_pct": round(statistics.fmean(r["machine_cpu_pct"] for r in mine), 1),
            "client_cpu_pct": round(statistics.fmean(r["client_cpu_pct"] for r in mine), 1),
            "send_late_p95_each": [r["send_late_p95_ms"] for r in mine],
            "gpu_util_pct": round(statistics.fmean(gpu), 1) if gpu else None}


def parity(rows: list[dict], names: list[str]) -> list[dict]:
    """Per N and pair of servers: sessions whose text is identical (first repeat of each)."""
    out = []
    ns = sorted({r["n"] for r in rows})
    for n in ns:
        first = {}
        for r in rows:
            if r["n"] == n and r["server"] not in first and not r["errors"]:
                first[r["server"]] = r["texts"]
        for a in names:
            for b in names:
                if a < b and a in first and b in first:
                    same = sum(x == y for x, y in zip(first[a], first[b], strict=True))
                    out.append({"n": n, "a": a, "b": b, "same": same, "of": n})
    return out


def print_tables(rows: list[dict], names: list[str], ns: list[int]) -> dict:
    summary = {}
    for name in names:
        table = [p for n in ns if (p := pooled(rows, name, n)) is not None]
        summary[name] = {"rows": table, "knee": knee(table)}
        print(f"\n{name}: knee (largest N with p95 <= {KNEE_P95_MS:.0f} ms) = {knee(table)}")
        print(f"{'N':>4} {'runs':>4} {'p50':>7} {'p95':>7} {'p99':>7}  {'p95 each run':<18}"
              f"{'behind':<10} {'late ms':<12} {'client%':>7} {'machine%':>8} {'gpu%':>5}  "
              "server CPU % of a core; CPU ms per stream-step")
        for p in table:
            each = "/".join(f"{x:.0f}" if x is not None else "-" for x in p["p95_each"])
            behind = "/".join(str(x) for x in p["behind_each"])
            late = "/".join(f"{x:.0f}" for x in p["send_late_p95_each"])
            cpu = " ".join(f"{k} {v:.0f}" for k, v in p["cpu_pct"].items() if v >= 0.5) + "; " + \
                " ".join(f"{k} {v:.2f}" for k, v in p["cpu_ms_per_step"].items() if v >= 0.01)
            gpu = "n/a" if p["gpu_util_pct"] is None else f"{p['gpu_util_pct']:.0f}"
            print(f"{p['n']:>4} {p['runs']:>4} {_f(p['p50_ms'])} {_f(p['p95_ms'])} "
                  f"{_f(p['p99_ms'])}  {each:<18}{behind:<10} {late:<12} {p['client_cpu_pct']:>7.0f} "
                  f"{p['machine_cpu_pct']:>8.0f} {gpu:>5}  {cpu}")
    if any(x > CLIENT_LATE_MS for r in rows for x in [r["send_late_p95_ms"]]):
        print(f"\nNote: in some runs this client sent its blocks late (\"late ms\": p95 of the "
              f"delay behind the 80 ms pace, per run; over {CLIENT_LATE_MS:.0f} ms in "
              f"{sum(r['send_late_p95_ms'] > CLIENT_LATE_MS for r in rows)} of {len(rows)} runs): "
              "the machine starved the client, and those runs' latencies measure the machine, "
              "not the server. CPU ms per stream-step still compares the servers.")
    return summary


def _f(x) -> str:
    return f"{x:>7.1f}" if x is not None else f"{'-':>7}"


def start_all(servers: list[Server], audio: np.ndarray, args) -> None:
    """Every server started and healthy, then warmed up (first-request costs, not reported)."""
    t0 = time.monotonic()
    for s in servers:
        s.start()
    pending = list(servers)
    while pending:
        if time.monotonic() - t0 > args.start_timeout:
            raise SystemExit(f"capacity: {[s.name for s in pending]} not up after "
                             f"{args.start_timeout:.0f} s")
        pending = [s for s in pending if not s.healthy()]
        time.sleep(1.0)
    print(f"servers up in {time.monotonic() - t0:.0f} s", flush=True)
    for s in servers:
        asyncio.run(run_sessions(s.url, s.served, s.key, audio[:SAMPLE_RATE * 2], 1, 0.0,
                                 args.drain, first_step_samples(args.delay_ms), s.compression))


def run_all(servers: list[Server], ns: list[int], audio: np.ndarray, args,
            gpu: GpuSampler) -> list[dict]:
    """Every (repeat, N, server) run, interleaved: each N every server in turn, the order
    reversed on alternate repeats; a server's larger N skipped once its p95 passed the limit."""
    rows = []
    for rep in range(args.repeats):
        stopped: set[str] = set()  # each repeat tries every N again
        for n in ns:
            order = servers if rep % 2 == 0 else list(reversed(servers))
            for s in (s for s in order if s.name not in stopped):
                row = run_one(s, n, audio, args, gpu)
                row["repeat"] = rep
                rows.append(row)
                print(f"  rep {rep} {s.name:<12} N={n:<4} p50 {row['p50_ms']} p95 "
                      f"{row['p95_ms']} p99 {row['p99_ms']} ms (after each session's first "
                      f"{row['after_start']['after_steps']} steps p50 {row['after_start']['p50_ms']}"
                      f" p95 {row['after_start']['p95_ms']}; start wave "
                      f"{row['after_start']['wave_steps']} steps), behind {row['behind']}/{n}, "
                      f"cpu {row['cpu_pct']}, machine {row['machine_cpu_pct']} %, load "
                      f"{row['load'][3]}" + (f", errors {row['errors']}" if row["errors"]
                                            else ""), flush=True)
                if row["p95_ms"] is None or row["p95_ms"] > args.stop_p95_ms:
                    stopped.add(s.name)
                time.sleep(1.0)
    return rows


def profile_and_print(s: Server, audio: np.ndarray, args) -> dict:
    prof = profile(s, args.profile, audio, args, Path(args.profile_dir))
    for label, top in prof["processes"].items():
        print(f"\nprofile {s.name} N={args.profile} {label}: {top['samples']} samples,"
              f" {top['ms_per_step']} ms of CPU per stream-step")
        for f, _count, ms in top["inclusive"][:15]:
            print(f"  {ms:>7} ms  {f[:110]}")
    return prof


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", help="model folder (default: the tiny model with weight files, "
                                    "made in a temporary folder)")
    ap.add_argument("--dummy-weights", action="store_true", help="random weights (no files)")
    ap.add_argument("--sessions", default="1,2,4,8", help="N values, comma-separated")
    ap.add_argument("--seconds", type=float, default=10.0, help="audio per session")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--spread", type=float, default=1.0, help="seconds over which starts spread")
    ap.add_argument("--drain", type=float, default=30.0,
                    help="seconds after a session's audio to wait for its transcription.done")
    ap.add_argument("--behind-ms", type=float, default=250.0)
    ap.add_argument("--delay-ms", type=int, default=480, help="the model's transcription delay")
    ap.add_argument("--servers", default="vllm=vllm,voxcap=voxcap",
                    help="NAME=KIND,... (KIND vllm: vLLM's own server, its defaults; voxcap: "
                         "voxcap serve)")
    ap.add_argument("--server", action="append", default=[], metavar="\"NAME=KIND [FLAGS]\"",
                    help="one more configuration: vLLM flags and VAR=VALUE environment words")
    ap.add_argument("--max-streams", type=int, help="voxcap serve --max-streams (default: the "
                                                     "largest N)")
    ap.add_argument("--eager", action=argparse.BooleanOptionalAction, default=None,
                    help="--enforce-eager for every server (default: on vLLM's CPU build)")
    ap.add_argument("--cpu-as-gpu", action=argparse.BooleanOptionalAction, default=True,
                    help="on vLLM's CPU build, every server runs its worker inside the engine "
                         "core as vLLM does on one GPU (voxcap's plugin, "
                         "VOXCAP_VLLM_CPU_AS_GPU=1), instead of the CPU build's separate "
                         "worker process and its hand-off per step, which one GPU's server does "
                         "not have (default on)")
    ap.add_argument("--audio", help="a speech file (WAV, FLAC, any rate) instead of espeak-ng and sox, "
                    "e.g. benchmarks/audio/speech16k.flac")
    ap.add_argument("--stop-p95-ms", type=float, default=2000.0,
                    help="skip a server's larger N once its p95 passed this (bounded time)")
    ap.add_argument("--start-timeout", type=float, default=900.0)
    ap.add_argument("--profile", type=int, metavar="N", help="one more run at N with py-spy")
    ap.add_argument("--profile-dir", default="capacity-profiles")
    ap.add_argument("--profile-gil", action="store_true",
                    help="profile only the thread holding the GIL (py-spy --gil)")
    ap.add_argument("--out", help="JSON of every run")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(name)s %(message)s")
    try:
        ns = sorted({int(x) for x in args.sessions.split(",") if x.strip()})
    except ValueError:
        raise SystemExit(f"capacity: --sessions {args.sessions!r}: expected numbers like 1,2,4") \
            from None
    if not ns or ns[0] < 1:
        raise SystemExit("capacity: --sessions needs numbers of 1 or more")
    specs = [parse_server(s) for s in args.servers.split(",") if s] + \
        [parse_server(s) for s in args.server]
    names = [s[0] for s in specs]
    if len(set(names)) != len(names):
        raise SystemExit(f"capacity: two servers share a name: {names}")
    from voxcap.engine.vllm_adapter import platform as engine_platform

    args.cpu = engine_platform.installed_build()[0] == "cpu"
    if args.eager is None:
        args.eager = args.cpu
    args.max_streams = args.max_streams or max(ns + ([args.profile] if args.profile else []))
    work = Path(tempfile.mkdtemp(prefix="voxcap-capacity-"))
    if not args.model:
        from voxcap.engine.model.tiny import write_tiny_model

        args.model = str(write_tiny_model(work / "tiny", weights_seed=0))
    audio = speech(args.seconds, args.audio)
    print(f"capacity: {len(audio) / SAMPLE_RATE:.1f} s of speech per session, N = {ns}, "
          f"{args.repeats} repeats, servers {names}, model {args.model}, CPU build {args.cpu}, "
          f"eager {args.eager}; work folder {work}", flush=True)
    print(f"machine: {psutil.cpu_count()} CPUs, load before {os.getloadavg()}", flush=True)
    servers = [Server(name, kind, flags, env, args, work, compression)
               for name, kind, flags, env, compression in specs]
    rows: list[dict] = []
    result = {"args": {k: v for k, v in vars(args).items()}, "runs": rows,
              "load_before": os.getloadavg()}
    gpu = GpuSampler()
    try:
        start_all(servers, audio, args)
        idle = Window(servers)
        with idle:
            time.sleep(3.0)
        result["idle_cpu_pct"] = idle.cpu
        print(f"idle (3 s): server CPU % {idle.cpu}, machine {idle.machine_pct} %", flush=True)
        rows += run_all(servers, ns, audio, args, gpu)
        result["summary"] = print_tables(rows, names, ns)
        result["parity"] = parity(rows, names)
        print("\nsame text per session (first run of each N):")
        for p in result["parity"]:
            print(f"  N={p['n']:<4} {p['a']} vs {p['b']}: {p['same']}/{p['of']}")
        if args.profile:
            result["profiles"] = [profile_and_print(s, audio, args) for s in servers]
        result["load_after"] = os.getloadavg()
        print(f"\nload after {os.getloadavg()}", flush=True)
    finally:
        for s in servers:
            s.stop()
        gpu.__exit__()
        if args.out:
            Path(args.out).write_text(json.dumps(result, indent=1, default=str))
            print(f"JSON: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
