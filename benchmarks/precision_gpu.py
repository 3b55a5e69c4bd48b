"""One engine per precision and kernel choice on an NVIDIA GPU: what vLLM resolved and selected
(graph mode, FlashAttention version, attention backend, FP8 kernel), GPU memory against voxcap's
estimate, step p50/p95 at 1 and 2 streams, the share of steps replayed as full CUDA graphs, and
(with --paced) the caption lag of real-time streams.

    python -m benchmarks.precision_gpu --model DIR --dummy-weights --precision fp8 \
        [--fa 2] [--marlin] [--app] [--seconds 10] [--paced 15] [--out result.json]

--fa 2       vLLM 0.32's engine argument attention_config={"flash_attn_version": 2}: the kernel
             RTX 30/40 cards run (the H200 runs FlashAttention 3)
--marlin     VLLM_DISABLED_KERNELS lists every FP8 kernel ahead of MarlinFP8ScaledMMLinearKernel
             (weight-only FP8, what RTX 20/30 run)
--turing     what an RTX 20 card (compute capability 7.5) runs, forced on the H200: float16 (no
             bfloat16 before 8.0) and vLLM's TRITON_ATTN backend (FlashAttention needs 8.0, and
             vLLM 0.32 keeps FlashInfer off sm75); with an FP8 precision add --marlin. voxcap's
             own choice is told the GPU is 7.5 (no bfloat16, no FP8 KV cache, and since issue 29
             no 4-bit weights: Marlin's FP4 kernel failed in float16 here)
--compile-off  compilation mode NONE (no torch.compile), FULL_DECODE_ONLY graphs kept: a memory
             and start-up lever
--force      start even where voxcap's gate refuses (explicit gpu_memory_utilization from what is
             free): does vLLM itself start, and what does it take?
--trace CSV  NVML's used memory every 100 ms (the start-up peak; without it only the peak is kept)
--app        the settings the desktop app starts its engine with (AppSettings.engine_settings():
             2 streams asked, precision Automatic unless --precision); the engine is its
             LocalEngine (the app wraps it in rollover, which changes neither memory nor precision)
The engine runs in this process, verbose; vLLM's log goes to --log (grep'd for what it chose).
Run one configuration per invocation; benchmarks/gpu/chain_precision.sh runs the set.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import threading
import time
from pathlib import Path

from voxcap.framing import SAMPLE_RATE, STEP_SAMPLES

from .lib.percentiles import percentile

# every FP8 kernel vLLM 0.32 tries before Marlin on CUDA (vllm/model_executor/kernels/linear)
AHEAD_OF_MARLIN = ("FlashInferFP8ScaledMMLinearKernel,CutlassFP8ScaledMMLinearKernel,"
                   "B12xTensorFP8ScaledMMLinearKernel,PerTensorTorchFP8ScaledMMLinearKernel,"
                   "ChannelWiseTorchFP8ScaledMMLinearKernel")
CHOSEN = re.compile(r"Using FlashAttention version \d|Selected \w+ for \w+|Using \w+ for \w+ GEMM|"
                    r"Using \w+ attention backend|Using \w+ backend\.|[Dd]owncasting \S+ to \S+|"
                    r"Casting \S+ to \S+")


# vLLM's own figures of its start (gpu_model_runner.py): weights as loaded, CUDA graphs' memory
LOG_FIGURES = {"weights_gib": re.compile(r"Model loading took ([\d.]+) GiB"),
               "graphs_gib": re.compile(r"Graph capturing finished in \d+ secs, took (-?[\d.]+) GiB")}


class Sampler(threading.Thread):
    """NVML's used memory every 100 ms: the peak since ``mark()``, and a CSV trace if asked."""

    def __init__(self, trace: str):
        super().__init__(daemon=True)
        self.trace = open(trace, "w") if trace else None  # closed in stop()
        self.peak = 0
        self.running = True

    def run(self):
        t0 = time.time()
        while self.running:
            used = used_bytes() or 0
            self.peak = max(self.peak, used)
            if self.trace:
                self.trace.write(f"{time.time() - t0:.2f},{used >> 20}\n")
            time.sleep(0.1)

    def mark(self) -> int:
        peak, self.peak = self.peak, 0
        return peak

    def stop(self):
        self.running = False
        self.join(2)
        if self.trace:
            self.trace.close()


def used_bytes() -> int | None:
    from voxcap.commands.bench import gpu_used_bytes

    return gpu_used_bytes()


def used_free() -> int:
    from voxcap.gpu import read_gpu, visible_gpu_index

    return read_gpu(visible_gpu_index()).memory_free_bytes


def free_total() -> int:
    from voxcap.gpu import read_gpu, visible_gpu_index

    return read_gpu(visible_gpu_index()).memory_total_bytes


def settings_for(args):
    from voxcap.engine.settings import InProcessSettings

    extra: dict = {"attention_config": {"flash_attn_version": args.fa}} if args.fa else {}
    if args.turing:
        extra = {"dtype": "float16", "attention_config": {"backend": "TRITON_ATTN"}}
        from dataclasses import replace

        import voxcap.engine.inprocess.engine as inprocess  # voxcap's choice sees an RTX 20

        real = inprocess._gpu_facts
        inprocess._gpu_facts = lambda: replace(real(), compute_capability=(7, 5))
    if args.app:
        from voxcap.app.settings import AppSettings
        from voxcap.engine.choice import EngineChoice

        s = AppSettings(engine=EngineChoice(model_dir=args.model, dummy_weights=args.dummy_weights,
                                            precision=args.precision)).engine_settings()
        return s.__class__(**{**s.__dict__, "extra_engine_args": extra})
    s = InProcessSettings(model_dir=args.model, dummy_weights=args.dummy_weights,
                       precision=args.precision, max_streams=args.max_streams,
                       extra_engine_args=extra).validated()
    if args.compile_off:
        extra["compilation_config"] = {"mode": 0, "cudagraph_mode": s.graph_mode,
                                       "cudagraph_capture_sizes": list(s.capture_sizes)}
    if args.force:  # past voxcap's gate (0.05: the least its settings take); vLLM asked for less
        free = used_free()
        extra["gpu_memory_utilization"] = round(max(free - 0.6 * 2**30, 0) / free_total(), 4)
        s = s.__class__(**{**s.__dict__, "gpu_memory_utilization": 0.05})
    return s


def paced(engine, streams: int, seconds: float, deltas: list) -> dict:
    """``streams`` real-time streams (80 ms blocks every 80 ms): caption lag, i.e. from the end
    of a token's audio being pushed to its delta, p50/p95."""
    from voxcap.commands.bench import speech_like
    from voxcap.events import TextDelta

    pushed_at: dict[str, list[float]] = {}
    lags: list[float] = []
    lock = threading.Lock()
    deltas.clear()
    ids = [engine.open_stream() for _ in range(streams)]
    audio = [speech_like(seconds, seed=10 + i) for i in range(streams)]
    for sid in ids:
        pushed_at[sid] = []
    t0 = time.perf_counter()
    step = STEP_SAMPLES
    for k in range(0, audio[0].size, step):
        for sid, a in zip(ids, audio, strict=True):
            engine.push_audio(sid, a[k:k + step])
            with lock:
                pushed_at[sid].append(time.time())
        time.sleep(max(0.0, t0 + (k + step) / SAMPLE_RATE - time.perf_counter()))
    for sid in ids:
        engine.close_stream(sid)
        engine.wait_stream(sid, timeout=120)
    for ev in list(deltas):
        if isinstance(ev, TextDelta) and ev.stream_id in pushed_at:
            times = pushed_at[ev.stream_id]
            k = ev.index + len(ev.token_ids) - 1  # the token describes the audio pushed in block k
            if 0 <= k < len(times):
                lags.append((ev.produced_at - times[k]) * 1000)
    return {"paced_streams": streams, "lag_p50_ms": percentile(lags, 50, digits=1),
            "lag_p95_ms": percentile(lags, 95, digits=1),
            "lag_samples": len(lags)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--dummy-weights", action="store_true")
    ap.add_argument("--precision", default="auto")
    ap.add_argument("--fa", type=int, choices=(2, 3), default=None)
    ap.add_argument("--marlin", action="store_true")
    ap.add_argument("--turing", action="store_true")
    ap.add_argument("--app", action="store_true")
    ap.add_argument("--compile-off", action="store_true")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--trace", default="")
    ap.add_argument("--max-streams", type=int, default=2)
    ap.add_argument("--streams", default="1,2")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--paced", type=float, default=0.0, metavar="S")
    ap.add_argument("--eager", action="store_true", help="no graphs (a quick check of the script)")
    ap.add_argument("--label", default="")
    ap.add_argument("--out", default="")
    ap.add_argument("--log", default="precision_gpu.log")
    args = ap.parse_args()
    if args.marlin:
        os.environ["VLLM_DISABLED_KERNELS"] = AHEAD_OF_MARLIN
    log_fd = os.open(args.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    saved_err = os.dup(2)
    os.dup2(log_fd, 2)  # vLLM's own log (verbose engine) and its children's, for the grep below

    from voxcap.commands.bench import _measure_run
    from voxcap.engine.inprocess.engine import LocalEngine

    settings = settings_for(args)
    if args.eager:
        settings = settings.__class__(**{**settings.__dict__, "enforce_eager": True})
    before = used_bytes()
    sampler = Sampler(args.trace)
    sampler.start()
    t0 = time.perf_counter()
    deltas: list = []
    engine = LocalEngine(settings, on_event=deltas.append, verbose=True)
    result: dict = {"label": args.label, "precision_asked": args.precision, "fa": args.fa,
                    "marlin": args.marlin, "turing": args.turing, "app_settings": args.app}
    engine.start()
    try:
        ready = engine.wait_ready()
        if ready is None or getattr(engine, "failure", None):
            raise RuntimeError(getattr(engine.failure, "message", "engine did not start"))
        after = used_bytes()
        if before is not None:
            result["start_peak_bytes"] = sampler.mark() - before
        result.update(startup_s=round(time.perf_counter() - t0, 1), precision=ready.precision,
                      precision_line=ready.precision_line, resolved_mode=ready.resolved_graph_mode,
                      max_streams=ready.max_streams, notes=list(ready.notes),
                      gpu_used_bytes=(after - before) if before is not None and after else None)
        local = engine
        if local.precision_choice is not None:
            from voxcap.engine.sizing import memory

            result["estimate_bytes"] = memory.footprint_bytes(local.weights_estimate_bytes,
                                                              local.kv_budget)
            result["kv_cache_bytes"] = local.kv_budget
            if result["gpu_used_bytes"]:
                result["used_over_estimate"] = round(result["gpu_used_bytes"]
                                                     / result["estimate_bytes"], 3)
        counts = [n for n in map(int, args.streams.split(",")) if n <= ready.max_streams]
        deltas.clear()
        result["runs"] = [_measure_run(engine, ready, ready.resolved_graph_mode, n, args.seconds,
                                       0.0) for n in counts]
        if args.paced:
            result.update(paced(engine, min(2, ready.max_streams), args.paced, deltas))
    except Exception as exc:  # noqa: BLE001 - a configuration that fails is a result too
        result["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        if before is not None:
            result["run_peak_bytes"] = sampler.mark() - before
        engine.shutdown()
        sampler.stop()
        os.dup2(saved_err, 2)
    text = Path(args.log).read_text(errors="replace")
    result["chosen"] = sorted(set(CHOSEN.findall(text)))
    for key, pattern in LOG_FIGURES.items():
        found = pattern.findall(text)
        result[key] = float(found[-1]) if found else None
    line = json.dumps(result)
    print(line, flush=True)
    if args.out:
        Path(args.out).write_text(line + "\n")
    return 1 if "error" in result else 0


if __name__ == "__main__":
    sys.exit(main())
