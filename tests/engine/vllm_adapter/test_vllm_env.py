"""Where the processes voxcap starts for vLLM keep their caches (engine/vllm_adapter/env.py)."""

from __future__ import annotations

from voxcap.engine.vllm_adapter.env import JIT_CACHE_BYTES, cache_env


def test_caches_live_in_voxcaps_folder_and_the_jit_cache_is_large(tmp_path, monkeypatch):
    for name in ("VLLM_CACHE_ROOT", "CUDA_CACHE_PATH", "CUDA_CACHE_MAXSIZE", "TORCHINDUCTOR_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("VOXCAP_CACHE_DIR", str(tmp_path))
    env = cache_env()
    assert env["VLLM_CACHE_ROOT"] == str(tmp_path / "vllm")
    # the driver's PTX JIT of vLLM's FlashAttention 2 on RTX 50 cards: kept once made, under
    # voxcap's folder (uninstall removes it), and the driver keeps entries only below its size
    assert env["CUDA_CACHE_PATH"] == str(tmp_path / "cuda-jit")
    assert int(env["CUDA_CACHE_MAXSIZE"]) == JIT_CACHE_BYTES == 4 * 2**30
    # torch's compile cache: not torchinductor_<user> in the temporary folder
    assert env["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "torchinductor")


def test_what_the_person_set_wins(tmp_path, monkeypatch):
    monkeypatch.setenv("VOXCAP_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CUDA_CACHE_PATH", "/elsewhere/jit")
    monkeypatch.setenv("CUDA_CACHE_MAXSIZE", "1000")
    monkeypatch.setenv("VLLM_CACHE_ROOT", "/elsewhere/vllm")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "/elsewhere/inductor")
    assert cache_env() == {"VLLM_CACHE_ROOT": "/elsewhere/vllm", "CUDA_CACHE_PATH": "/elsewhere/jit",
                           "CUDA_CACHE_MAXSIZE": "1000", "TORCHINDUCTOR_CACHE_DIR": "/elsewhere/inductor"}



def test_a_first_start_that_compiles_fa2_is_foreseen_only_where_it_happens(tmp_path, monkeypatch):
    """RTX 50 (12.x) runs vLLM 0.32's FA2 from PTX: its first start compiles it (minutes, said so);
    once the JIT cache holds it, or on 8.x / Hopper, nothing is said."""
    from voxcap.engine.vllm_adapter.env import JIT_CACHED_BYTES, first_jit_compile

    monkeypatch.setenv("CUDA_CACHE_PATH", str(tmp_path / "jit"))
    assert first_jit_compile((12, 0)) and first_jit_compile((12, 1))  # no cache folder yet
    assert not first_jit_compile((8, 6)) and not first_jit_compile((8, 9))
    assert not first_jit_compile((9, 0)) and not first_jit_compile(None)
    (tmp_path / "jit" / "ComputeCache" / "a").mkdir(parents=True)
    (tmp_path / "jit" / "ComputeCache" / "a" / "small").write_bytes(b"x" * 4096)
    assert first_jit_compile((12, 0))  # a few entries: not FA2's kernels yet
    with open(tmp_path / "jit" / "ComputeCache" / "a" / "fa2", "wb") as f:
        f.truncate(JIT_CACHED_BYTES)
    assert not first_jit_compile((12, 0))


def test_the_engine_notes_the_first_compile_on_the_graph_capture_stage(tmp_path):
    """LocalEngine's stage reports (what vLLM's processes log) carry the note only for the graph
    capture of a first-compile start; the other stages and other cards carry none."""
    from voxcap.engine.inprocess.engine import LocalEngine
    from voxcap.engine.settings import InProcessSettings
    from voxcap.engine.vllm_adapter.env import FIRST_JIT_NOTE
    from voxcap.events import EngineProgress

    seen = []
    engine = LocalEngine(InProcessSettings(str(tmp_path)), on_event=seen.append)
    engine._stage_progress("capturing graphs", "Capturing CUDA graphs (FULL)")
    engine.first_jit = True
    engine._stage_progress("compiling", "torch.compile")
    engine._stage_progress("capturing graphs", "Capturing CUDA graphs (FULL)")
    progress = [ev for ev in seen if isinstance(ev, EngineProgress)]
    assert [(ev.stage, ev.note) for ev in progress] == [
        ("capturing graphs", ""), ("compiling", ""), ("capturing graphs", FIRST_JIT_NOTE)]
    assert "several minutes" in FIRST_JIT_NOTE and "once" in FIRST_JIT_NOTE
