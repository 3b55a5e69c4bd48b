"""Where vLLM keeps its files when voxcap runs it: under voxcap's own cache folder.

vLLM writes its caches (model-class inspection, torch.compile and Triton artifacts) to
``~/.cache/vllm`` by default, which no uninstall of voxcap could tell from another program's.
Every place voxcap starts vLLM (the commands, the in-process engine, ``voxcap serve``) points
``VLLM_CACHE_ROOT`` at ``<voxcap cache>/vllm`` first, so ``voxcap prepare`` fills exactly the
caches the real start reads (engine/inprocess/prepare.py: vLLM leaves the cache root out of its compile
hash, so the key is the same wherever the root is) and uninstall removes them with the rest.
A ``VLLM_CACHE_ROOT`` set by the person wins, for both alike.

The CUDA driver's JIT cache goes there too, and is made large enough: vLLM 0.32's FlashAttention 2
build carries machine code for compute capability 8.x only (its fatbin: sm_80 SASS + PTX), so a
card of another major version that runs it (RTX 50, sm_120) has the driver compile the PTX at the
first graph capture, minutes long (seen on the H200 forced to FA2: 117 s to over 200 s). Cached,
that happens once; the driver's default cache may be too small to keep it.

PyTorch's inductor cache (``torchinductor_<user>`` in the temporary folder by default, made even
when nothing is compiled) goes there as well: a cache kept across runs belongs in the cache
folder, and a logout must leave nothing in the temporary one.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from ... import paths

log = logging.getLogger(__name__)

CACHE_ENV = "VLLM_CACHE_ROOT"
JIT_CACHE_ENV = "CUDA_CACHE_PATH"
JIT_CACHE_SIZE_ENV = "CUDA_CACHE_MAXSIZE"
INDUCTOR_CACHE_ENV = "TORCHINDUCTOR_CACHE_DIR"
JIT_CACHE_BYTES = 4 * 2**30  # the driver's largest
# Cards whose first start has the driver compile FA2's PTX: RTX 50 (12.0) and later. 8.x runs the
# sm_80 code as it is; Hopper (9.0) runs FlashAttention 3. On the H200 forced to FA2 the first
# start took 530 s (254 s of it capturing graphs), the next ones 62-64 s, with 85 MiB cached.
FIRST_JIT_MAJOR = 12
JIT_CACHED_BYTES = 32 * 2**20  # less than this in the cache: FA2 was not compiled for it yet
FIRST_JIT_NOTE = ("First start on this graphics card: the NVIDIA driver is compiling vLLM's "
                  "attention kernels for it, once; this can take several minutes, and later "
                  "starts skip it.")


def cache_env() -> dict[str, str]:
    """The cache variables vLLM's processes get: the person's own, else voxcap's folder."""
    inductor = os.environ.get(INDUCTOR_CACHE_ENV) or str(paths.cache_dir() / "torchinductor")
    return {CACHE_ENV: os.environ.get(CACHE_ENV) or str(paths.cache_dir() / "vllm"),
            JIT_CACHE_ENV: str(jit_cache_dir()),
            JIT_CACHE_SIZE_ENV: os.environ.get(JIT_CACHE_SIZE_ENV) or str(JIT_CACHE_BYTES),
            INDUCTOR_CACHE_ENV: inductor}


RPC_BASE_ENV = "VLLM_RPC_BASE_PATH"  # where vLLM puts its ZeroMQ socket files (default: the temporary folder)
_SOCKET_PATH_MAX = 107  # a Unix socket's path: 108 bytes with the terminating NUL
_SOCKET_NAME = 37  # vLLM's "/<uuid4>"


def rpc_env(folder: Path) -> dict[str, str]:
    """vLLM's ZeroMQ sockets in ``folder`` (a run's own, removed with it: vLLM leaves three
    socket files a start in the temporary folder, after a clean stop too), unless its paths
    would be too long for a socket there (then vLLM's default)."""
    if len(os.fsencode(str(folder))) + _SOCKET_NAME > _SOCKET_PATH_MAX:
        return {}
    return {RPC_BASE_ENV: str(folder)}


# vLLM's processes talk over TCP too (gloo's listeners: ~13 on the CPU build, NCCL's bootstrap on
# GPUs), unauthenticated, at the address the host name resolves to: on a box whose name resolves
# to its network address they were open to the network while voxcap serve said "127.0.0.1 only".
# One box, one engine: they stay on the loopback interface (a person's own setting wins).
LOOPBACK_ENV = {"GLOO_SOCKET_IFNAME": "lo", "NCCL_SOCKET_IFNAME": "lo",
                "VLLM_HOST_IP": "127.0.0.1", "VLLM_LOOPBACK_IP": "127.0.0.1"}


def loopback_env() -> dict[str, str]:
    """The variables that keep vLLM's internal TCP ports on loopback, whatever the host name
    resolves to (those the person set are kept)."""
    return {k: os.environ.get(k) or v for k, v in LOOPBACK_ENV.items()}


def jit_cache_dir() -> Path:
    return Path(os.environ.get(JIT_CACHE_ENV) or paths.cache_dir() / "cuda-jit")


def first_jit_compile(compute_capability: tuple[int, int] | None) -> bool:
    """Whether this card's first start is ahead: a card the driver compiles FA2 for, and little
    in the JIT cache yet."""
    if compute_capability is None or compute_capability[0] < FIRST_JIT_MAJOR:
        return False
    try:
        cached = sum(f.stat().st_size for f in jit_cache_dir().rglob("*") if f.is_file())
    except OSError:  # unreadable: say it rather than stay silent for minutes
        log.info("the CUDA JIT cache could not be read", exc_info=True)
        cached = 0
    return cached < JIT_CACHED_BYTES


def use_voxcap_caches() -> None:
    """Point this process (and what it starts) at voxcap's cache folder; before vLLM's import."""
    os.environ.update(cache_env())
