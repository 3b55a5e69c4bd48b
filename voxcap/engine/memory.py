"""The in-process engine's GPU memory: what it needs, and what to tell vLLM.

voxcap sizes the KV cache itself (``kv_cache_memory_bytes``) instead of letting vLLM take 90 %
of the GPU. vLLM still refuses to start unless ``gpu_memory_utilization`` x total memory is
*free* at start-up (``request_memory`` in vllm/v1/worker/utils.py), even with a fixed KV size,
so at 0.9 a 16 GB card with 2 GB used by the desktop could not start. voxcap therefore asks for
the footprint it needs plus a margin, never a blanket 90 %.
"""

from __future__ import annotations

from pathlib import Path

GIB = 2**30
ACTIVATIONS_BYTES = 1 * GIB  # activations, CUDA graphs, allocator slack (measured figure: none yet)
KV_MARGIN = 1.25  # block rounding and the prompt's own tokens
# vLLM unifies page sizes across the decoder's and the encoder's cache groups; for small models
# that makes blocks of ~1,000 tokens, so tiny budgets round badly. Real models never hit this.
KV_FLOOR = 256 * 2**20
UTILIZATION_MARGIN = 1.10


def kv_budget_bytes(info, max_streams: int, max_model_len: int, dtype_bytes: int,
                    kv_cache_gib: float | None = None) -> int:
    """KV-cache bytes for ``max_streams`` sessions of ``max_model_len`` tokens (or the set budget)."""
    if kv_cache_gib is not None:
        return int(kv_cache_gib * GIB)
    return max(KV_FLOOR, int(max_streams * KV_MARGIN * info.kv_cache_bytes(max_model_len, dtype_bytes)))


def param_bytes(p: dict, dtype_bytes: int) -> int:
    """Weights of one transformer stack from its shape (random weights: no file to measure)."""
    dim, layers = p["dim"], p["n_layers"]
    head_dim = p.get("head_dim") or dim // p["n_heads"]
    q = p["n_heads"] * head_dim
    kv = p.get("n_kv_heads", p["n_heads"]) * head_dim
    per_layer = dim * q + 2 * dim * kv + q * dim + 3 * dim * p.get("hidden_dim", 4 * dim)
    return (layers * per_layer + p.get("vocab_size", 0) * dim) * dtype_bytes


def weights_bytes(info, dtype_bytes: int) -> tuple[int, str]:
    """(bytes, how it was found): the weights file's size, else an estimate from the shape."""
    f = Path(info.path) / "consolidated.safetensors"
    if f.is_file():
        return f.stat().st_size, "size of consolidated.safetensors"
    enc = info.params["multimodal"]["whisper_model_args"]["encoder_args"]
    return (param_bytes(info.params, dtype_bytes) + param_bytes(enc, dtype_bytes),
            "from the model's shape (random weights)")


def gpu_memory_utilization_for(need_bytes: int, total_bytes: int) -> float:
    """The ``gpu_memory_utilization`` that lets vLLM start when ``need_bytes`` (+10 %) are free."""
    return round(min(0.95, max(0.05, need_bytes * UTILIZATION_MARGIN / total_bytes)), 4)
