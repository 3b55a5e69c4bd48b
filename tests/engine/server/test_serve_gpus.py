"""``voxcap serve --gpus 2`` running: vLLM's data parallel on its CPU build, two simulated GPUs
(tests/support/fake_nvml.c) for voxcap's check. Two engine processes behind one address, voxcap's
plugin and its session fix in each, the app's remote engine's two sessions served one by each
engine with the same text, the engines forked from the server (as on GPUs), and nothing left
after a ``kill -9`` of ``voxcap serve``."""

from __future__ import annotations

import queue
import re
import time

import psutil
import pytest
from support.vllm_server import VllmServer

from voxcap.commands.bench import speech_like
from voxcap.engine.remote.engine import RemoteEngine
from voxcap.engine.remote.settings import RemoteSettings
from voxcap.events import StreamFinished, TextDelta


@pytest.fixture(scope="module")
def fake_nvml(tmp_path_factory):
    from support.fake_nvml import fake_nvml_or_skip

    return fake_nvml_or_skip(tmp_path_factory)


def engine_cores(server: VllmServer) -> dict[int, psutil.Process]:
    """{data-parallel rank: its engine-core process} below ``voxcap serve``."""
    out = {}
    for p in server.descendants():
        try:
            m = re.match(r"VLLM::EngineCore_DP(\d+)", " ".join(p.cmdline()))
        except psutil.NoSuchProcess:
            continue
        if m:
            out[int(m.group(1))] = p
    return out


def test_two_gpus_two_engines_one_address(tiny_weights_dir, fake_nvml):
    env = {"LD_LIBRARY_PATH": str(fake_nvml), "VOXCAP_NVML": "ctypes", "FAKE_NVML_COUNT": "2"}
    # vLLM's CPU build checks gpu_memory_utilization against the host's memory, per engine
    server = VllmServer(tiny_weights_dir, max_streams=2, env=env,
                        serve_args=["--gpus", "2", "--vllm-args=--gpu-memory-utilization 0.3"])
    server.start(timeout=900)
    try:
        assert "up to 4 streams (2 on each of 2 GPUs)" in server.output()
        cores = engine_cores(server)
        assert sorted(cores) == [0, 1], server.log_tail()
        log = server.server_log.read_text(errors="replace")
        # the session fix in each engine: applied there (spawned), or inherited from the
        # server it was forked from (vLLM's CPU build with one OpenMP thread, as on GPUs)
        fixed = {int(p) for p in re.findall(r"voxcap session fix applied \(vLLM [^,]+, pid (\d+)\)",
                                           log)}
        fixed |= {int(p) for p, what in re.findall(
            r"voxcap fixes inherited by forked process \(pid (\d+) from \d+\): (.*)", log)
            if "session" in what.split(", ")}
        assert {p.pid for p in cores.values()} <= fixed, (fixed, cores)  # in each engine
        # forked, as on GPUs (one OpenMP thread here, engine/vllm_adapter/cpu_processes.py): the
        # engines, their workers and vLLM's coordinator, none an interpreter started afresh
        assert f"voxcap CPU processes (pid {cores[0].ppid()}): engine core forked" in log, log[-3000:]
        below = server.descendants()
        spawned = [" ".join(p.cmdline())[:100] for p in below
                   if "multiprocessing.spawn" in " ".join(p.cmdline())]
        assert not spawned and len([p for p in below if p.name().startswith("VLLM::Worker")]) == 2, \
            (spawned, [p.name() for p in below])
        cpu = {rank: sum(p.cpu_times()[:2]) for rank, p in cores.items()}
        time.sleep(3.0)  # idle: what an engine without a session costs
        before = {rank: sum(p.cpu_times()[:2]) for rank, p in cores.items()}
        idle = {rank: before[rank] - cpu[rank] for rank in cores}

        eng = RemoteEngine(RemoteSettings(server.url, server.served_name,
                                          api_key=server.api_key, max_streams=2)).start()
        try:
            eng.wait_ready(timeout=60)
            audio = speech_like(4.0, seed=2)
            sids = [eng.open_stream("Them"), eng.open_stream("You")]
            t0 = time.perf_counter()
            for k, i in enumerate(range(0, audio.size, 1280)):  # two live captures at once
                time.sleep(max(0.0, t0 + k * 0.08 - time.perf_counter()))
                for sid in sids:
                    eng.push_audio(sid, audio[i:i + 1280])
            for sid in sids:
                eng.close_stream(sid)
            texts, done = {sid: [] for sid in sids}, set()
            deadline = time.monotonic() + 180
            while done != set(sids) and time.monotonic() < deadline:
                try:
                    ev = eng.events.get(timeout=0.5)
                except queue.Empty:
                    continue
                if isinstance(ev, TextDelta) and ev.stream_id in texts:
                    texts[ev.stream_id].append(ev.text)
                elif isinstance(ev, StreamFinished) and ev.stream_id in texts:
                    done.add(ev.stream_id)
        finally:
            eng.shutdown()
        assert done == set(sids), server.log_tail()
        a, b = ("".join(texts[sid]) for sid in sids)
        assert a and a == b  # the same audio, the same text on either engine
        # vLLM's balancer gave each engine one of the two sessions: each engine worked (seen:
        # 0.12-0.13 s of CPU each for these 4 s; none in 3 s idle, and an engine without a
        # session gets no messages: a dense model's engines do not synchronise)
        used = {rank: sum(p.cpu_times()[:2]) - before[rank] for rank, p in cores.items()}
        assert all(used[r] > idle[r] + 0.05 for r in cores), (idle, used)

        tree = server.descendants()
        server.kill()  # kill -9 of voxcap serve alone
        gone, alive = psutil.wait_procs(tree, timeout=15)
        assert not alive, [(p.pid, " ".join(p.cmdline())[:80]) for p in alive]
    finally:
        server.stop()
