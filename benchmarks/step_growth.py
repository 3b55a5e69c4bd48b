"""Per-step time of one realtime session vs its position, with and without voxcap's vLLM fix.

A bare vLLM streaming loop (the plumbing of vLLM's own /v1/realtime server, no voxcap engine code)
feeds DURATION seconds of deterministic speech-like audio as fast as the engine takes it. A step's
time is the gap between two consecutive token outputs as the caller sees them; the figures are
the mean / p50 / p95 per 1,000 tokens of session position. Each variant runs in a fresh process
with its own engine: "off" is vLLM 0.32.0 as installed, "on" enables voxcap's session fix
(``VOXCAP_VLLM_SESSION_FIX=1``, applied by voxcap's vLLM plugin in vLLM's engine processes).
The token ids of both variants are compared: the fix must not change what the model produces.

Two more variants test voxcap's token carry (``VOXCAP_VLLM_TOKEN_CARRY=1``): "carry" sends each
chunk ahead of the previous token with a placeholder the engine core replaces
(voxcap/engine/inprocess/feed.py), "blind" sends the same placeholders with the carry off (the
control: the model then sees the placeholder, so its tokens must differ). Both have
the session fix on; compare them with "on".

``--share-engine`` runs the variants that need the same engine ("on", "carry" and "blind": the
fix on, the carry installed; "carry" is the only request that asks for it) as requests one after
the other in one engine, prefix and encoder caches reset between them, each request's log cut
at a marker line: two vLLM starts instead of four (the tests); without it every variant has an
engine of its own (step-time comparisons).

usage:
  python -m benchmarks.step_growth --model DIR [--dummy-weights] [--graph-mode FULL_DECODE_ONLY]
      [--duration 160] [--variants off,on] [--max-model-len 8192] [--kv-cache-gib G]
      [--enforce-eager] [--extra-args JSON] [--bucket 1000] [--share-engine] [--out step_growth.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import time
from pathlib import Path

import numpy as np

from voxcap.framing import STEP_SAMPLES

from .lib.percentiles import percentile
from .lib.processes import run_module

FIX_ENV = "VOXCAP_VLLM_SESSION_FIX"
CARRY_ENV = "VOXCAP_VLLM_TOKEN_CARRY"
VARIANTS_ENV = "VOXCAP_GROWTH_VARIANTS"  # child: the variants it runs, one request each, in order
MARKER = "STEP_GROWTH_REQUEST_DONE"  # child, on stdout and stderr after each request's last output


def feed_of(variant: str) -> str:
    """"carry" and "blind" feed placeholders ahead of the token; the others wait for the echo."""
    return "carry" if variant in ("carry", "blind") else "echo"


def rss_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


async def stream(a) -> list[dict]:
    """One engine, one request per variant of VARIANTS_ENV, in order."""
    import torch
    from vllm.engine.arg_utils import AsyncEngineArgs
    from vllm.v1.engine.async_llm import AsyncLLM

    from voxcap.commands.bench import speech_like

    cuda = torch.cuda.is_available()
    kv_gib = a.kv_cache_gib if a.kv_cache_gib is not None else (6.0 if cuda else 0.25)
    capture = [int(x) for x in a.capture_sizes.split(",") if x]
    t0 = time.perf_counter()
    engine = AsyncLLM.from_engine_args(AsyncEngineArgs(
        model=a.model, tokenizer_mode="mistral", config_format="mistral",
        load_format="dummy" if a.dummy_weights else "mistral",
        max_model_len=a.max_model_len, max_num_seqs=1, limit_mm_per_prompt={"audio": 1},
        dtype="bfloat16" if cuda else "float32", enforce_eager=a.enforce_eager,
        compilation_config={"cudagraph_mode": a.graph_mode, "cudagraph_capture_sizes": capture},
        kv_cache_memory_bytes=int(kv_gib * 2**30), mm_processor_cache_gb=0, seed=0,
        **(json.loads(a.extra_args) if a.extra_args else {})))
    start_s = time.perf_counter() - t0
    from vllm.model_executor.model_loader import get_model_cls

    manager = getattr(getattr(engine.engine_core, "resources", None), "engine_manager", None)
    core_pids = [p.pid for p in getattr(manager, "processes", []) if p.pid]
    model_cls = get_model_cls(engine.model_config)
    from voxcap.engine.inprocess.feed import TokenFeed

    audio = speech_like(a.duration, seed=11)
    runs = []
    for k, variant in enumerate(os.environ[VARIANTS_ENV].split(",")):
        if k:  # the next request must not reuse this one's blocks or encoder outputs
            await engine.reset_prefix_cache()
            await engine.reset_encoder_cache()
        run = await one_request(a, engine, model_cls, TokenFeed, audio, variant, core_pids)
        runs.append(run)
        # the engine processes' last log lines for this request may still be on their way
        # (seen under load in CI: "off" missing its last encoder hashes): let them land first
        await asyncio.sleep(2.0)
        print(f"{MARKER} {variant}", flush=True)
        print(f"{MARKER} {variant}", file=sys.stderr, flush=True)
    engine.shutdown()
    # Whether the fix is in this process's Scheduler: a forked engine core inherits it from here
    # (its own log line is never printed then), a spawned one loads the same plugin itself.
    from voxcap.engine.vllm_adapter import patches as vllm_patches

    for run in runs:
        asked = run.pop("asked_carry")  # the carry acts on a request when installed and asked
        run.update(scheduler_patched=vllm_patches.session_fix_applied(), start_s=round(start_s, 2),
                   token_carry_applied=vllm_patches.token_carry_applied() and asked,
                   device="cuda" if cuda else "cpu",
                   resolved_graph_mode=str(engine.vllm_config.compilation_config.cudagraph_mode))
    return runs


async def one_request(a, engine, model_cls, token_feed, audio, variant: str, core_pids) -> dict:
    from vllm.engine.protocol import StreamingInput
    from vllm.renderers.inputs.preprocess import parse_model_prompt
    from vllm.sampling_params import RequestOutputKind, SamplingParams

    feed = token_feed(carry=feed_of(variant) == "carry")
    # "blind": the carry's placeholders, but the request does not ask the engine core to fill them
    extra = None if variant == "blind" else feed.sampling_extra_args()

    async def chunks():
        for i in range(0, audio.size, STEP_SAMPLES):
            yield audio[i:i + STEP_SAMPLES]

    async def inputs():
        async for p in model_cls.buffer_realtime_audio(chunks(), feed.queue, engine.model_config):
            (ei,) = await engine.renderer.render_cmpl_async([parse_model_prompt(engine.model_config, p)])
            yield StreamingInput(prompt=ei)

    # logprobs=1: the sampled token's log-probability, which depends on the audio embeddings of
    # its step, so comparing it across variants catches a changed model input even when the
    # dummy-weight model keeps choosing the same few token ids
    params = SamplingParams(temperature=0.0, max_tokens=model_cls.realtime_max_tokens,
                            output_kind=RequestOutputKind.DELTA, logprobs=1, extra_args=extra)
    ids: list[int] = []
    logprobs: list[float] = []
    times: list[float] = []
    rss: list[dict] = []
    t1 = time.perf_counter()
    async for out in engine.generate(prompt=inputs(), sampling_params=params,
                                     request_id=f"growth-{variant}"):
        new = list(out.outputs[0].token_ids) if out.outputs else []
        feed.output(new)
        for tok, lp in zip(new, (out.outputs[0].logprobs or []) if out.outputs else [], strict=False):
            logprobs.append(float(lp[tok].logprob) if lp and tok in lp else float("nan"))
        now = time.perf_counter()
        for tok in new:
            ids.append(tok)
            times.append(now)
            if len(ids) % a.bucket == 0:
                rss.append({"tokens": len(ids), **{str(p): rss_mib(p) for p in core_pids}})
        if out.finished or (a.wall_limit and now - t1 > a.wall_limit):
            break
    return {"variant": variant, "feed": "carry" if feed.carry else "echo", "asked_carry": bool(extra),
            "stream_s": round(time.perf_counter() - t1, 2), "tokens": ids, "logprobs": logprobs,
            "times": times, "engine_core_rss_mib": rss}


def buckets(times: list[float], size: int) -> list[dict]:
    gaps = np.diff(np.asarray(times)) * 1000.0
    out = []
    for k in range(0, gaps.size, size):
        g = gaps[k:k + size]
        if g.size < max(10, size // 10):
            break
        out.append({"from_token": k + 1, "n": int(g.size), "mean_ms": round(float(g.mean()), 3),
                    "p50_ms": percentile(g, 50, digits=3),
                    "p95_ms": percentile(g, 95, digits=3)})
    return out


def slope_ms_per_1k(rows: list[dict]) -> float | None:
    if len(rows) < 2:
        return None
    x = np.array([r["from_token"] + r["n"] / 2 for r in rows]) / 1000.0
    y = np.array([r["mean_ms"] for r in rows])
    return round(float(np.polyfit(x, y, 1)[0]), 3)


def fix_installed() -> bool:
    from importlib.metadata import entry_points

    return any(ep.name == "voxcap_patches" for ep in entry_points(group="vllm.general_plugins"))


ENCODED = re.compile(r"Finish execute for mm hash (\w+)")
DROPPED = re.compile(r"voxcap session fix: \S+ dropped (\d+) consumed audio items, (\d+) left")


def engine_groups(variants: list[str], share: bool) -> list[list[str]]:
    """The variants each engine runs: one each, or with ``share`` the fix-on ones together."""
    if not share:
        return [[v] for v in variants]
    on = [v for v in variants if v != "off"]
    return [[v] for v in variants if v == "off"] + ([on] if on else [])


def run_variants(a, variants: list[str]) -> list[dict]:
    """One child process and engine running ``variants`` as consecutive requests."""
    env = dict(os.environ)
    env[FIX_ENV] = "0" if variants == ["off"] else "1"
    env[CARRY_ENV] = "1" if "carry" in variants else "0"
    env[VARIANTS_ENV] = ",".join(variants)
    env.setdefault("VOXCAP_VLLM_CPU_AS_GPU", "1")  # CPU build: one process, forked (as on a GPU)
    # vLLM logs to stdout: a forked engine core inherits this child's block-buffered stdout, and
    # its lines would reach the pipe after the request's marker (seen: the "off" request's
    # encoder hashes cut short); unbuffered, each line is there before the marker.
    env["PYTHONUNBUFFERED"] = "1"
    if a.trace_encoder:
        env["VLLM_LOGGING_LEVEL"] = "DEBUG"  # the worker then logs each audio item it encodes
    proc = run_module("benchmarks.step_growth", "--child", *a.child_args, env=env,
                      timeout=a.timeout * len(variants))
    runs = None
    for line in proc.stdout.splitlines():
        if line.startswith("CHILD_RESULT "):
            runs = json.loads(line[len("CHILD_RESULT "):])
    if runs is None:
        return [{"variant": v, "failure": f"exit {proc.returncode}", "stderr_tail": proc.stderr[-4000:]}
                for v in variants]
    # each request's log lines: what both streams printed before its marker (the engine
    # processes log a step before its output reaches this process, which then prints the marker)
    if len(variants) == 1:  # one request: the whole log is its own, late lines included
        outs, errs = [proc.stdout], [proc.stderr]
    else:
        outs = re.split(rf"^{MARKER} \S+$", proc.stdout, flags=re.M)
        errs = re.split(rf"^{MARKER} \S+$", proc.stderr, flags=re.M)
    whole = proc.stdout + proc.stderr
    for res, out, err in zip(runs, outs, errs, strict=False):
        log = out + err
        res["fix_applied"] = res.pop("scheduler_patched", False) or "voxcap session fix applied" in whole
        # what a wrongly dropped audio item would cause: vLLM substitutes zeros and warns
        res["empty_embedding_warnings"] = log.count("empty multimodal embeddings")
        if a.trace_encoder:  # content hashes of the audio items, in the order the encoder ran them
            res["encoded_mm_hashes"] = ENCODED.findall(log)
            drops = [(int(d), int(left)) for d, left in DROPPED.findall(log)]
            res["session_fix_dropped"] = sum(d for d, _ in drops)  # audio items the fix let go
            res["session_fix_max_left"] = max((left for _, left in drops), default=None)
        res["buckets"] = buckets(res["times"], a.bucket)
        res["slope_ms_per_1k_tokens"] = slope_ms_per_1k(res["buckets"])
        res["stderr_tail"] = err[-1500:]
        res["engine_variants"] = variants
        del res["times"]
    return runs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--dummy-weights", action="store_true")
    ap.add_argument("--graph-mode", default="FULL_DECODE_ONLY")
    ap.add_argument("--capture-sizes", default="1")
    ap.add_argument("--duration", type=float, default=160.0, help="seconds of audio per variant")
    ap.add_argument("--wall-limit", type=float, default=0.0,
                    help="stop a variant's stream after this many wall seconds (0: none)")
    ap.add_argument("--variants", default="off,on")
    ap.add_argument("--max-model-len", type=int, default=8192)
    ap.add_argument("--kv-cache-gib", type=float, default=None,
                    help="default 6 on a GPU (real shape), 0.25 on the CPU")
    ap.add_argument("--enforce-eager", action="store_true")
    ap.add_argument("--extra-args", default="",
                    help='JSON dict of more vLLM engine args, e.g. \'{"enable_prefix_caching": false}\'')
    ap.add_argument("--bucket", type=int, default=1000, help="tokens per row")
    ap.add_argument("--timeout", type=float, default=900.0, help="per variant, seconds")
    ap.add_argument("--trace-encoder", action="store_true",
                    help="vLLM DEBUG logs: record which audio items the encoder ran (slows steps)")
    ap.add_argument("--share-engine", action="store_true",
                    help="run on, carry and blind as requests in one engine (2 starts instead of 4)")
    ap.add_argument("--out", default="")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        res = asyncio.run(stream(a))
        print("CHILD_RESULT " + json.dumps(res), flush=True)
        return 0
    a.child_args = [x for x in sys.argv[1:] if x != "--child"]
    if "on" in a.variants and not fix_installed():
        print("voxcap's vLLM plugin entry point 'voxcap_patches' is not installed here: reinstall "
              "voxcap from this checkout (pip install -e ., or on the GPU kit rebuild and send v00 "
              "and run install.sh again), otherwise the 'on' variant measures nothing.", flush=True)
        return 2
    order = [v.strip() for v in a.variants.split(",") if v.strip()]
    by_variant = {}
    for group in engine_groups(order, a.share_engine):
        by_variant.update((r["variant"], r) for r in run_variants(a, group))
    results = [by_variant[v] for v in order]
    for res in results:
        variant = res["variant"]
        if "failure" in res:
            print(f"[{variant}] FAILED: {res['failure']}\n{res['stderr_tail']}", flush=True)
            continue
        print(f"\n[{variant}] fix applied: {res['fix_applied']}; token carry: "
              f"{res['token_carry_applied']} ({res['feed']} feed); start {res['start_s']} s; "
              f"{len(res['tokens'])} tokens in {res['stream_s']} s; mode {res['resolved_graph_mode']}; "
              f"slope {res['slope_ms_per_1k_tokens']} ms per 1,000 tokens", flush=True)
        print(f"{'tokens':>13s} {'mean ms':>9s} {'p50 ms':>9s} {'p95 ms':>9s}")
        for b in res["buckets"]:
            print(f"{b['from_token']:6d}-{b['from_token'] + b['n'] - 1:<6d} {b['mean_ms']:9.2f} "
                  f"{b['p50_ms']:9.2f} {b['p95_ms']:9.2f}")
        if res["engine_core_rss_mib"]:
            print("engine-core RSS MiB per bucket:", res["engine_core_rss_mib"])
    done = [r for r in results if "tokens" in r]
    ok = [r for r in done if r["variant"] != "blind"]  # the control is meant to differ
    same = lp_diff = None
    if len(ok) >= 2:
        n = min(len(r["tokens"]) for r in ok)
        same = all(r["tokens"][:n] == ok[0]["tokens"][:n] for r in ok)
        print(f"\ntoken ids identical across {[r['variant'] for r in ok]} "
              f"(first {n} tokens): {same}")
        lps = [np.asarray(r["logprobs"][:n], dtype=float) for r in ok]
        if all(lp.size == n for lp in lps):
            lp_diff = max(float(np.nanmax(np.abs(lp - lps[0]))) if n else 0.0 for lp in lps)
            print(f"largest difference of the sampled tokens' log-probabilities: {lp_diff:.3g} "
                  f"({len(set(np.round(lps[0], 6)))} distinct values in {n} steps)")
    for r in done:  # each variant against the first, the control included
        if done and r is not done[0]:
            n = min(len(r["logprobs"]), len(done[0]["logprobs"]))
            d = np.abs(np.asarray(r["logprobs"][:n]) - np.asarray(done[0]["logprobs"][:n]))
            r["vs_first"] = {"variant": done[0]["variant"], "steps": n,
                             "tokens_identical": r["tokens"][:n] == done[0]["tokens"][:n],
                             "logprob_max_diff": float(np.nanmax(d)) if n else None}
            print(f"[{r['variant']}] vs [{done[0]['variant']}]: {r['vs_first']}")
    if a.out:
        Path(a.out).write_text(json.dumps({"args": {k: v for k, v in vars(a).items()
                                                    if k != "child_args"},
                                           "tokens_identical": same, "logprob_max_diff": lp_diff,
                                           "runs": results}, indent=1))
        print(f"JSON written to {a.out}")
    return 0 if ok and same is not False else 1


if __name__ == "__main__":
    sys.exit(main())
