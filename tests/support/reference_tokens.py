"""vLLM's own realtime tokens for given audio: the reference voxcap's engine must reproduce.

Run as a script in a process of its own with voxcap's vLLM plugins switched off
(``VLLM_PLUGINS`` set to a name no plugin has: vllm/plugins/__init__.py loads only the names it
lists) and no voxcap import: what vLLM's /v1/realtime server does for a client
(``buffer_realtime_audio``, each output's token echoed back into the buffer's queue, chunks of
1,280 samples), with the model folder given to vLLM as it is (no voxcap model view).

Its engine core runs the model in its own process, as vLLM runs it on one GPU (the "uni"
executor): ``VLLM_ENABLE_V1_MULTIPROCESSING=0``, vLLM's own switch, keeps the CPU platform from
moving the model into one more spawned worker process (vllm/platforms/cpu.py), an import of
torch and vLLM more for each engine (~20 s of CPU here). The engine core itself is still a process
of its own (AsyncLLM always starts one).

    python reference_tokens.py JOB.json OUT.json

JOB: {"model": DIR, "max_model_len": N, "runs": [{"name": RUN, "eager": bool,
      "delay_ms": 480 or null, "streams": {NAME: "AUDIO.npy"}}, ...]}: one engine per run, one
after the other in the same process (the imports once), the streams of a run one after the other.
OUT: {"tokens": {RUN: {NAME: {"tokens": [ids], "text": TEXT, "pieces": [each output's text]}}},
"plugins": [...],
"voxcap_imported": bool}.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

NO_PLUGINS = "none-voxcap-reference"  # a plugin name nobody registers: none is loaded
CHUNK = 1280


def _model_with_delay(model: str, delay_ms: int | None, tmp: Path) -> str:
    """The model folder, or a copy of it (links but tekken.json) with another delay: the only
    way vLLM takes one (tekken.json's audio.transcription_delay_ms, read at start)."""
    if delay_ms is None:
        return model
    src = Path(model)
    tekken = json.loads((src / "tekken.json").read_text())
    if tekken["audio"]["transcription_delay_ms"] == delay_ms:
        return model
    tekken["audio"]["transcription_delay_ms"] = delay_ms
    out = tmp / f"model-delay{delay_ms}"
    out.mkdir()
    for p in src.iterdir():
        if p.name != "tekken.json":
            (out / p.name).symlink_to(p.resolve())
    (out / "tekken.json").write_text(json.dumps(tekken))
    return str(out)


async def _run(job: dict, run: dict, tmp: Path) -> dict:
    import numpy as np
    from vllm.engine.arg_utils import AsyncEngineArgs
    from vllm.engine.protocol import StreamingInput
    from vllm.renderers.inputs.preprocess import parse_model_prompt
    from vllm.sampling_params import RequestOutputKind, SamplingParams
    from vllm.v1.engine.async_llm import AsyncLLM

    model = _model_with_delay(job["model"], run.get("delay_ms"), tmp)
    engine = AsyncLLM.from_engine_args(AsyncEngineArgs(
        model=model, tokenizer_mode="mistral", config_format="mistral", load_format="mistral",
        max_model_len=job["max_model_len"], max_num_seqs=1,
        limit_mm_per_prompt={"audio": 1}, dtype="float32", enforce_eager=run["eager"],
        max_num_batched_tokens=256, kv_cache_memory_bytes=256 * 2**20, mm_processor_cache_gb=0))
    from vllm.model_executor.model_loader import get_model_cls

    model_cls = get_model_cls(engine.model_config)
    result = {}
    try:
        for name, path in run["streams"].items():
            audio = np.load(path).astype(np.float32)
            tokens_q: asyncio.Queue = asyncio.Queue()

            async def chunks(audio=audio):
                for i in range(0, audio.size, CHUNK):
                    yield audio[i:i + CHUNK]

            async def inputs(chunks=chunks, tokens_q=tokens_q):
                async for p in model_cls.buffer_realtime_audio(chunks(), tokens_q,
                                                               engine.model_config):
                    (ei,) = await engine.renderer.render_cmpl_async(
                        [parse_model_prompt(engine.model_config, p)])
                    yield StreamingInput(prompt=ei)

            ids: list[int] = []
            text, pieces = [], []
            params = SamplingParams(temperature=0.0, max_tokens=model_cls.realtime_max_tokens,
                                    output_kind=RequestOutputKind.DELTA)
            async for out in engine.generate(prompt=inputs(), sampling_params=params,
                                             request_id=f"ref-{name}"):
                new = list(out.outputs[0].token_ids) if out.outputs else []
                tokens_q.put_nowait(new)  # the echo, as vLLM's realtime server does
                ids += new
                text.append(out.outputs[0].text if out.outputs else "")
                if out.outputs:  # the server sends a transcription.delta for each of these
                    pieces.append(out.outputs[0].text)
                if out.finished:
                    break
            result[name] = {"tokens": ids, "text": "".join(text), "pieces": pieces}
    finally:
        engine.shutdown()
    return result


class Pending:
    """A reference run going on in its own process; ``result()`` waits for its output."""

    def __init__(self, job: dict, timeout: float) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="voxcap-reference-")
        tmp = Path(self._tmp.name)
        job_file, self._out = tmp / "job.json", tmp / "out.json"
        job_file.write_text(json.dumps(job))
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("VOXCAP_VLLM_") and k != "PYTHONPATH"}
        env["VLLM_PLUGINS"] = NO_PLUGINS
        env["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"  # the worker inside the core (module doc)
        # what vLLM puts in the temporary folder (its ZeroMQ sockets: three a run, left there for
        # good), in this run's folder, removed with it; torch's compile cache kept for the next
        env["TMPDIR"] = env["VLLM_RPC_BASE_PATH"] = str(tmp)
        if os.environ.get("VOXCAP_CACHE_DIR"):  # the tests' (conftest.py), as voxcap's engine has it
            env.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(os.environ["VOXCAP_CACHE_DIR"],
                                                                   "torchinductor"))
        self._log = open(tmp / "log.txt", "w+")  # closed in result()
        self._proc = subprocess.Popen([sys.executable, __file__, str(job_file), str(self._out)],
                                      env=env, stdout=self._log, stderr=subprocess.STDOUT,
                                      cwd=tmp)
        self._timeout = timeout
        self._result: dict | None = None

    def result(self) -> dict:
        if self._result is None:
            try:
                code = self._proc.wait(self._timeout)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
                code = "killed after the timeout"
            self._log.seek(0)
            log = self._log.read()
            self._log.close()
            if not self._out.exists():
                self._tmp.cleanup()
                raise RuntimeError(f"reference run failed (exit {code}):\n{log[-5000:]}")
            self._result = json.loads(self._out.read_text())
            self._tmp.cleanup()
        return self._result


def start(job: dict, timeout: float = 900) -> Pending:
    """Start ``job`` in a fresh process without voxcap's plugins (see the module doc)."""
    return Pending(job, timeout)


def compute(job: dict, timeout: float = 900) -> dict:
    """``start(job)`` and wait for its output."""
    return start(job, timeout).result()


def main(job_path: str, out_path: str) -> int:
    job = json.loads(Path(job_path).read_text())
    tmp = Path(tempfile.mkdtemp(prefix="voxcap-reference-model-"))
    try:
        tokens = {run["name"]: asyncio.run(_run(job, run, tmp)) for run in job["runs"]}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    from importlib.metadata import entry_points

    import vllm.envs as envs

    groups = [ep.name for ep in entry_points(group="vllm.general_plugins")
              if envs.VLLM_PLUGINS is None or ep.name in envs.VLLM_PLUGINS]
    Path(out_path).write_text(json.dumps({
        "tokens": tokens, "plugins": groups,
        "voxcap_imported": any(m == "voxcap" or m.startswith("voxcap.") for m in sys.modules)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
