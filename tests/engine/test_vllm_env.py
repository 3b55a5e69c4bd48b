"""Where the processes voxcap starts for vLLM keep their caches (engine/vllm_env.py)."""

from __future__ import annotations

from voxcap.engine.vllm_env import JIT_CACHE_BYTES, cache_env


def test_caches_live_in_voxcaps_folder_and_the_jit_cache_is_large(tmp_path, monkeypatch):
    for name in ("VLLM_CACHE_ROOT", "CUDA_CACHE_PATH", "CUDA_CACHE_MAXSIZE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("VOXCAP_CACHE_DIR", str(tmp_path))
    env = cache_env()
    assert env["VLLM_CACHE_ROOT"] == str(tmp_path / "vllm")
    # the driver's PTX JIT of vLLM's FlashAttention 2 on RTX 50 cards: kept once made, under
    # voxcap's folder (uninstall removes it), and the driver keeps entries only below its size
    assert env["CUDA_CACHE_PATH"] == str(tmp_path / "cuda-jit")
    assert int(env["CUDA_CACHE_MAXSIZE"]) == JIT_CACHE_BYTES == 4 * 2**30


def test_what_the_person_set_wins(tmp_path, monkeypatch):
    monkeypatch.setenv("VOXCAP_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CUDA_CACHE_PATH", "/elsewhere/jit")
    monkeypatch.setenv("CUDA_CACHE_MAXSIZE", "1000")
    monkeypatch.setenv("VLLM_CACHE_ROOT", "/elsewhere/vllm")
    assert cache_env() == {"VLLM_CACHE_ROOT": "/elsewhere/vllm", "CUDA_CACHE_PATH": "/elsewhere/jit",
                           "CUDA_CACHE_MAXSIZE": "1000"}

