"""Start-up of voxcap's engine by stage, in the app process and in vLLM's engine-core process.

Each start runs in a fresh Python process (imports are part of what a user waits for) through
voxcap's own LocalEngine. Every vLLM process logs at DEBUG, with wall-clock time and pid, into one
JSON-lines file; the stages are cut from those records (patterns checked against vLLM 0.32.0), so
the same script measures the CPU build and CUDA vLLM. "cold" starts with empty compile caches
(vLLM's torch.compile cache, inductor, triton: all under a fresh VLLM_CACHE_ROOT), "warm" reuses
the caches the cold start wrote. After "ready": time to the first token of a stream.

"lean" is warm plus vLLM's switches for warm-ups a captioner does not need (LEAN_ARGS).

usage:
  python -m benchmarks.startup_profile --model DIR --dummy-weights [--graph-mode FULL_DECODE_ONLY]
      [--runs cold,warm[,lean]] [--cache-root DIR] [--max-streams N] [--kv-cache-gib G]
      [--enforce-eager] [--extra-args JSON] [--out startup.json] [--keep-logs DIR]
Prints a table per run and writes all figures as JSON to --out. --cache-root keeps the compile
caches in DIR (reused by a later invocation's warm/lean runs; a cold run empties it first).
"""

from __future__ import annotations

import time

T_MAIN = time.time()  # before any import: interpreter start -> here is "python start-up"

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

from .lib.processes import ROOT, module_command  # noqa: E402

T0_ENV = "VOXCAP_STARTUP_T0"  # wall-clock time the parent launched this child
LOG_ENV = "VOXCAP_STARTUP_LOG"

# Milestones cut from vLLM 0.32.0's log records: (stage that BEGINS at the first record matching the
# pattern, the process it must come from, pattern). A stage lasts until the next milestone in time.
# "worker" is vLLM's worker process (the CPU build always has one; CUDA with one GPU runs the
# worker inside the engine core, so "core|worker" accepts either).
MILESTONES: tuple[tuple[str, str, str], ...] = (
    ("vLLM: model-class inspection (a subprocess unless cached)", "app",
     r"^Cache model info|^Cached model info|^Loaded model info"),
    ("vLLM: engine, scheduler, compilation config", "app", r"^Resolved architecture"),
    ("multimodal processor warm-up (app)", "app", r"^Warming up multi-modal processing"),
    ("engine-core process: spawn, Python, imports", "app", r"^Multi-modal warmup completed"),
    ("engine-core: handshake, executor set-up", "core", r"^Waiting for init message"),
    ("worker process: spawn, Python, imports", "core", r"^OpenMP thread binding info"),
    ("worker: device + distributed init", "worker", r"."),
    ("model init + weight load", "core|worker", r"^Starting to load model"),
    ("dummy encoder (mm profiling)", "core|worker", r"^Encoder cache will be initialized"),
    ("torch.compile (dynamo + inductor, or cache load)", "core|worker",
     r"^Start compiling function|^Directly load|^Dynamo bytecode transform|^Compiling a graph"),
    ("profiling / warm-up run", "core|worker",
     r"saved AOT compiled function|^torch\.compile takes|^Initial profiling/warmup run"),
    ("KV cache sizing + allocation", "core|worker",
     r"^Initial free memory|^Available KV cache memory|KV cache size:|^Explicitly set .* for KV cache"),
    ("kernel warm-up + CUDA graph capture", "core|worker",
     r"^Capturing CUDA graphs|^Compile and warming up model|^JIT kernel warmup starting"),
    ("sampler warm-up, engine-core ready", "core|worker", r"^Graph capturing finished"),
    ("engine-core ready -> app", "core", r"^init engine \(profile, create kv cache"),
    ("app: tokenizer, model class, ready event", "app", r"^READY from local core engine"),
)
# "lean": warm caches plus vLLM's public switches for warm-ups a one-model captioner does not need.
# They are left out of vLLM's compile-cache hash (KernelConfig.compute_hash), so the warm cache holds.
LEAN_ARGS = {"kernel_config": {"enable_jit_warmup": False, "enable_cutedsl_warmup": False},
             "enable_flashinfer_autotune": False}
# vLLM's own timing lines, quoted in the JSON (compile and capture times, config retries)
TIMING = re.compile(r"took|takes|time:|Elapsed|finished in|Error parsing config|load failure", re.I)


# ------------------------------------------------------------------------- child ----
def _logging_config(path: Path, log_file: str) -> Path:
    config = {
        "version": 1, "disable_existing_loggers": False,
        "formatters": {"plain": {"format": "%(levelname)s %(name)s: %(message)s"}},
        "handlers": {
            "console": {"class": "logging.StreamHandler", "formatter": "plain", "level": "WARNING",
                        "stream": "ext://sys.stderr"},
            "stages": {"()": "voxcap.engine.inprocess.progress.StageFileHandler", "level": "INFO"},
            "all": {"()": "benchmarks.startup_profile_log.RecordFile", "level": "DEBUG", "path": log_file},
        },
        "loggers": {"vllm": {"handlers": ["console", "stages", "all"], "level": "DEBUG",
                             "propagate": False}},
    }
    path.write_text(json.dumps(config), encoding="utf-8")
    return path




def child(a) -> None:
    t0 = float(os.environ[T0_ENV])
    log_file = os.environ[LOG_ENV]
    marks = {"process launched": t0, "python started": T_MAIN}

    def mark(name):
        marks[name] = time.time()


    mark("numpy imported")
    from voxcap.commands.bench import speech_like
    from voxcap.engine.inprocess import engine as local
    from voxcap.engine.settings import InProcessSettings

    mark("voxcap engine imported")
    import torch  # noqa: F401  (LocalEngine imports it too; timed apart here)

    mark("torch imported")
    import vllm  # noqa: F401
    from vllm.engine.arg_utils import AsyncEngineArgs  # noqa: F401
    from vllm.v1.engine.async_llm import AsyncLLM  # noqa: F401

    mark("vllm imported")
    # every vLLM process (they inherit the environment) logs all its records to log_file
    local.write_logging_config = lambda path, level: _logging_config(path, log_file)
    events = []
    extra = json.loads(a.extra_args) if a.extra_args else {}
    if a.lean:
        extra = {**LEAN_ARGS, **extra}
    settings = InProcessSettings(model_dir=a.model, dummy_weights=a.dummy_weights,
                              graph_mode=a.graph_mode, max_streams=a.max_streams,
                              enforce_eager=a.enforce_eager, kv_cache_gib=a.kv_cache_gib,
                              max_model_len=a.max_model_len,
                              extra_engine_args=extra)
    engine = local.LocalEngine(settings, on_event=lambda e: events.append((time.time(), e)))
    mark("engine.start() called")
    engine.start()
    out = {"marks": marks, "events": [], "first_token_s": None, "failure": None,
           "app_pid": os.getpid()}
    try:
        ready = engine.wait_ready(timeout=a.timeout)
        mark("ready")
        out["ready"] = {"resolved_graph_mode": ready.resolved_graph_mode,
                        "capture_sizes": list(ready.capture_sizes), "device": ready.device,
                        "start_seconds": ready.start_seconds}
        out["engine_pids"] = engine.engine_pids()
        # first caption: a stream opened right after ready, 2 s of speech-like audio pushed at once
        sid = engine.open_stream()
        t_open = time.time()
        audio = speech_like(2.0, seed=3)
        engine.push_audio(sid, audio)
        first = None
        deadline = time.time() + 120
        while first is None and time.time() < deadline:
            for t, e in list(events):
                if type(e).__name__ == "TextDelta" and getattr(e, "stream_id", None) == sid:
                    first = t
                    break
            time.sleep(0.005)
        out["first_token_s"] = None if first is None else first - t_open
        engine.close_stream(sid)
        engine.wait_stream(sid, timeout=60)
    except Exception as exc:  # noqa: BLE001 - reported in the JSON
        out["failure"] = f"{type(exc).__name__}: {exc}"
    finally:
        engine.shutdown()
    out["events"] = [{"t": t, "type": type(e).__name__, "stage": getattr(e, "stage", None),
                      "detail": str(getattr(e, "detail", ""))[:200]} for t, e in events
                     if type(e).__name__ in ("EngineProgress", "EngineReady", "EngineFailed")]
    print("CHILD_RESULT " + json.dumps(out), flush=True)


# ------------------------------------------------------------------------ parent ----
def read_records(path: Path) -> list[dict]:
    recs = []
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                recs.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return sorted(recs, key=lambda r: r["t"])


def stage_table(res: dict, recs: list[dict]) -> list[dict]:
    """Consecutive stages from process launch to ready (each: start, seconds, process)."""
    m = res["marks"]
    app_pid = res.get("app_pid")
    core_pids = set(res.get("engine_pids") or [])
    t_launch = m["process launched"]
    points = [("Python interpreter start", m["process launched"], "app"),
              ("import numpy", m["python started"], "app"),
              ("import voxcap", m["numpy imported"], "app"),
              ("import torch", m["voxcap engine imported"], "app"),
              ("import vllm (+ plugins)", m["torch imported"], "app"),
              ("settings, model check", m["vllm imported"], "app"),
              ("LocalEngine: platform check, KV budget (CUDA: memory query)",
               m["engine.start() called"], "app")]
    for e in res["events"]:
        if e["type"] == "EngineProgress" and e["stage"] == "starting engine process":
            points.append(("vLLM: parse params.json (+ failing HF-config retries)", e["t"], "app"))
    t_start = m["engine.start() called"]

    def role(pid):
        return "app" if pid == app_pid else "core" if pid in core_pids else "worker"

    seen = set()
    core_seen = False
    for r in recs:
        if r["t"] < t_start:
            continue
        who = role(r["pid"])
        core_seen = core_seen or who == "core"
        if who == "worker" and not core_seen:
            continue  # e.g. vLLM's model-inspection subprocess, before the engine core exists
        for stage, where, pat in MILESTONES:
            if stage in seen or who not in where.split("|"):
                continue
            if re.search(pat, r["msg"]):
                seen.add(stage)
                points.append((stage, r["t"], who))
                break
    points.sort(key=lambda p: p[1])
    t_ready = m.get("ready")
    rows = []
    for i, (name, t, proc) in enumerate(points):
        end = points[i + 1][1] if i + 1 < len(points) else (t_ready or t)
        rows.append({"stage": name, "process": proc, "from_s": round(t - t_launch, 3),
                     "seconds": round(end - t, 3)})
    if t_ready:
        rows.append({"stage": "READY", "process": "app", "from_s": round(t_ready - t_launch, 3),
                     "seconds": 0.0})
    return rows


def print_table(label: str, rows: list[dict], res: dict) -> None:
    first = res.get("first_token_s")
    first = "none" if first is None else f"{first:.3f} s"
    print(f"\n== {label}: ready after {res.get('ready_s') or float('nan'):.1f} s; first token {first} "
          f"after opening a stream; mode {res.get('ready', {}).get('resolved_graph_mode')}")
    print(f"{'stage':60s} {'process':7s} {'at s':>8s} {'takes s':>8s}")
    for r in rows:
        print(f"{r['stage']:60s} {r['process']:7s} {r['from_s']:8.2f} {r['seconds']:8.2f}")
    print(f"config-parse errors logged: {res.get('config_parse_errors')} (each failed parse retries "
          f"after a 2 s sleep); compile-cache load failures: {res.get('compile_cache_load_failures')}")
    for line in res.get("vllm_timing_lines", [])[:14]:
        print(f"  vLLM @{line['at_s']:7.2f}s pid {line['pid']}: {line['msg'][:150]}")


def top_messages(recs: list[dict], t_launch: float, n: int = 400) -> list[dict]:
    return [{"at_s": round(r["t"] - t_launch, 3), "pid": r["pid"], "level": r["level"],
             "msg": r["msg"][:200]} for r in recs[:n]]


def run_once(a, label: str, cache_root: Path, workdir: Path) -> dict:
    log_file = workdir / f"{label}.records.jsonl"
    env = dict(os.environ)
    env.update({
        "VLLM_CACHE_ROOT": str(cache_root / "vllm"),
        "TORCHINDUCTOR_CACHE_DIR": str(cache_root / "inductor"),
        "TRITON_CACHE_DIR": str(cache_root / "triton"),
        LOG_ENV: str(log_file),
        "VLLM_LOGGING_LEVEL": "DEBUG",
        # every vLLM process imports benchmarks.startup_profile_log (named in the logging
        # config), wherever it was started from
        "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p),
    })
    cmd = module_command("benchmarks.startup_profile", "--child", *a.child_args,
                         *(["--lean"] if label == "lean" else []))
    env[T0_ENV] = repr(time.time())
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=a.timeout + 180,
                          cwd=ROOT)
    res = None
    for line in proc.stdout.splitlines():
        if line.startswith("CHILD_RESULT "):
            res = json.loads(line[len("CHILD_RESULT "):])
    if res is None:
        return {"label": label, "failure": f"child exit {proc.returncode}",
                "stderr_tail": proc.stderr[-3000:]}
    recs = read_records(log_file)
    pids = {r["pid"] for r in recs}
    res["label"] = label
    t_launch = res["marks"]["process launched"]
    res["ready_s"] = (res["marks"]["ready"] - t_launch) if "ready" in res["marks"] else None
    res["stages"] = stage_table(res, recs)
    res["vllm_pids"] = sorted(pids)
    res["config_parse_errors"] = sum("Error parsing config" in r["msg"] for r in recs)
    res["compile_cache_load_failures"] = sum("load failure" in r["msg"] for r in recs)
    res["vllm_timing_lines"] = [{"at_s": round(r["t"] - t_launch, 3), "pid": r["pid"],
                                 "msg": r["msg"][:240]} for r in recs if TIMING.search(r["msg"])]
    res["records"] = top_messages(recs, t_launch, a.records)
    res["returncode"] = proc.returncode
    res["stderr_tail"] = proc.stderr[-1500:]
    if a.keep_logs:
        Path(a.keep_logs).mkdir(parents=True, exist_ok=True)
        shutil.copy(log_file, Path(a.keep_logs) / log_file.name)
        (Path(a.keep_logs) / f"{label}.stderr").write_text(proc.stderr)
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--dummy-weights", action="store_true")
    ap.add_argument("--graph-mode", default="FULL_DECODE_ONLY")
    ap.add_argument("--max-streams", type=int, default=2, help="as the app's default")
    ap.add_argument("--max-model-len", type=int, default=8192)
    ap.add_argument("--kv-cache-gib", type=float, default=None)
    ap.add_argument("--enforce-eager", action="store_true")
    ap.add_argument("--extra-args", default="", help="JSON dict of more vLLM engine args")
    ap.add_argument("--runs", default="cold,warm",
                    help="comma list of: cold (empty compile caches), warm (the caches as left), "
                         "lean (warm + the warm-up switches in LEAN_ARGS)")
    ap.add_argument("--lean", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--cache-root", default="", help="compile caches (default: a fresh temp dir)")
    ap.add_argument("--timeout", type=float, default=400.0)
    ap.add_argument("--records", type=int, default=400, help="vLLM log records kept in the JSON")
    ap.add_argument("--out", default="")
    ap.add_argument("--keep-logs", default="")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a)
        return 0
    a.child_args = [x for x in sys.argv[1:] if x not in ("--child",)]
    workdir = Path(tempfile.mkdtemp(prefix="voxcap-startup-"))
    cache_root = Path(a.cache_root) if a.cache_root else workdir / "cache"
    results = []
    try:
        for label in [r.strip() for r in a.runs.split(",") if r.strip()]:
            if label == "cold" and cache_root.exists():
                shutil.rmtree(cache_root)
            cache_root.mkdir(parents=True, exist_ok=True)
            res = run_once(a, label, cache_root, workdir)
            results.append(res)
            if res.get("stages"):
                print_table(label, res["stages"], res)
            else:
                print(f"\n== {label}: FAILED {res.get('failure')}\n{res.get('stderr_tail', '')}")
            sys.stdout.flush()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    summary = {"args": {k: v for k, v in vars(a).items() if k != "child_args"},
               "python": sys.version.split()[0], "runs": results}
    if a.out:
        Path(a.out).write_text(json.dumps(summary, indent=1), encoding="utf-8")
        print(f"\nJSON written to {a.out}")
    return 0 if all(r.get("ready_s") for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
