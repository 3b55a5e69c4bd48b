"""The in-process engine: vLLM's AsyncLLM on a background thread with its own event loop.

The rest of the app sees a plain thread-safe interface (open a stream, push audio, close or
abort it, shut down) and a stream of plain events (``voxcap.events``). The streaming sequence
is the one vLLM's own /v1/realtime server uses: one ``generate`` per stream, fed a prompt as
each chunk of its audio arrives.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import threading
import time
import uuid
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ... import logs, paths
from ...errors import EngineError
from ...events import EngineReady, EngineStopped, StreamFinished, TextDelta
from ...framing import SAMPLE_RATE
from ..base import EngineBase, EventSink
from ..model.folder import ModelInfo, inspect_model_dir, model_dir_for_vllm, tokenizer_dir_for_delay
from ..settings import InProcessSettings, default_capture_sizes
from ..sizing import memory
from ..sizing.memory import Sizing
from ..sizing.precision import Choice, GpuFacts
from ..sizing.verdict import read_gpu_facts, verdict
from ..stats import EngineStats
from ..vllm_adapter import internals
from ..vllm_adapter import patches as vllm_patches
from ..vllm_adapter import platform as engine_platform
from ..vllm_adapter.audio_frontend import FRONTEND_ENV
from ..vllm_adapter.cpu_processes import CPU_AS_GPU_ENV
from ..vllm_adapter.env import (
    FIRST_JIT_NOTE,
    first_jit_compile,
    loopback_env,
    rpc_env,
    use_voxcap_caches,
)
from ..vllm_adapter.pad_stall import stall_extra_args
from ..vllm_adapter.patches import SESSION_FIX_ENV, TOKEN_CARRY_ENV
from ..vllm_adapter.plugin import APP_PID_ENV, CHILD_STDERR_ENV, EARLY_HOOK_DIR, tie_forked_children
from ..vllm_adapter.rendezvous import RENDEZVOUS_DIR_ENV
from .feed import TokenFeed
from .progress import STAGE_ENV, StageTail, kv_cache_capacity, write_logging_config

log = logging.getLogger(__name__)
WORKDIR_PREFIX = "voxcap-engine-"  # <tmp>/voxcap-engine-<pid>-*: stage file, vLLM's stderr, logging


@dataclass
class _Stream:
    stream_id: str
    request_id: str
    audio: asyncio.Queue  # numpy chunks, None = end of audio
    label: str = ""
    samples_in: int = 0
    tokens: int = 0
    prompt_len: int = 0
    close_requested: bool = False
    aborted: bool = False
    task: asyncio.Task | None = None
    done: threading.Event = field(default_factory=threading.Event)


class LocalEngine(EngineBase):
    """Voxtral Realtime in vLLM, in this process (engine core in vLLM's child process).

    Events go to ``on_event`` (called on the engine thread: keep it quick) or, if none is
    given, to ``self.events`` (a ``queue.Queue``).
    """

    thread_name = "voxcap-engine"
    what = "The engine"

    def __init__(self, settings: InProcessSettings, on_event: EventSink | None = None,
                 verbose: bool = False) -> None:
        super().__init__(settings.validated(), on_event, verbose)
        self._engine: Any = None  # vLLM's AsyncLLM, while it runs
        self.model_info: ModelInfo | None = None
        self.kv_plan: memory.KVPlan | None = None  # the KV-cache layout the budget was sized for
        self.kv_budget = 0
        self.kv_plan_dtype_bytes = 2  # bytes of a KV element (1 with the FP8 KV cache)
        self.precision_choice: Choice | None = None  # once the engine arguments are made
        self.weights_estimate_bytes = 0
        self.vllm_env: dict[str, str] = {}
        self.first_jit = False  # this card's first start: the driver compiles FA2 (vllm_adapter/env.py)
        self.start_method = ""  # how vLLM started its engine core: "fork" or "spawn"
        self.token_carry = False  # chunks go ahead of their tokens (vllm_adapter/patches.py), once ready
        self._workdir = paths.run_tempdir(WORKDIR_PREFIX)
        self._child_stderr = self._workdir / "vllm-stderr.log"
        self._child_stderr_logged = 0

    def _prepare(self) -> None:
        """The model directory is checked now (ModelDirError with the fix)."""
        self._inspect_model()

    def _inspect_model(self) -> ModelInfo:
        info = self.model_info = inspect_model_dir(self.settings.model_dir, self.settings.dummy_weights)
        self.settings = self.settings.for_model(info.max_model_len)
        return info

    @property
    def on_cuda(self) -> bool:
        """False with vLLM's CPU build: graph modes and the GPU memory share change nothing."""
        return engine_platform.installed_build()[0] != "cpu"

    def engine_pids(self) -> list[int]:
        """PIDs of vLLM's engine-core processes (their workers are their children)."""
        manager = getattr(getattr(getattr(self._engine, "engine_core", None), "resources", None),
                          "engine_manager", None)
        return [p.pid for p in getattr(manager, "processes", []) if p.pid]

    def _explain(self, exc: BaseException) -> tuple[str, str]:
        self._log_child_stderr()
        return engine_platform.explain_failure(exc, self._stage_errors())

    def _log_child_stderr(self) -> None:
        """What vLLM's processes wrote to stderr since the last call (their tracebacks), into
        voxcap.log: the terminal only shows voxcap's line."""
        try:
            with open(self._child_stderr, "rb") as f:
                f.seek(self._child_stderr_logged)
                new = f.read()
        except OSError:
            return
        self._child_stderr_logged += len(new)
        text = new.decode("utf-8", "replace").strip()
        if text:
            log.error("vLLM's processes wrote to stderr (last 8000 characters):\n%s", text[-8000:])

    def _cleanup(self) -> None:
        self._restore_env()
        paths.remove_run_tempdir(self._workdir)

    def _left_running(self) -> None:
        # its processes die with the app, so its temporary folder goes now, not when (if ever)
        # its thread ends
        paths.remove_run_tempdir(self._workdir)

    def _restore_env(self) -> None:
        """Put back what the engine set for vLLM's children, once: as soon as they are spawned
        (nothing else the app starts, such as another vLLM, must inherit them), or at the end."""
        saved: dict[str, str | None] = getattr(self, "_saved_env", {})
        self._saved_env: dict[str, str | None] = {}
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    def _stage_errors(self) -> list[str]:
        tail = getattr(self, "_tail", None)
        return tail.errors if tail else []

    async def _run(self) -> None:
        self._progress("importing", "vLLM and PyTorch")
        use_voxcap_caches()  # vLLM's caches in voxcap's folder, as for `voxcap prepare`
        build = engine_platform.check_platform()
        stage_file = self._workdir / "stages.jsonl"
        # vLLM reads these from the environment in this process and in the children it spawns.
        # They point into this engine's temporary folder, so they are put back on shutdown:
        # anything started later (another engine, a vLLM server) must not inherit dead paths.
        env = {STAGE_ENV: str(stage_file), APP_PID_ENV: str(os.getpid()),
               # fork: the engine core starts with torch and vLLM already imported (a spawned one
               # imports them again: 26 s of a 67 s start on the H200). Safe because the app never
               # touches CUDA itself (NVML only: platform.py); a fork refused anyway is retried
               # with spawn below. VOXCAP_VLLM_START=spawn always spawns.
               "VLLM_WORKER_MULTIPROC_METHOD": start_method(),
               # its sitecustomize ties each spawned child to its parent before vLLM's imports
               "PYTHONPATH": os.pathsep.join(
                   [str(EARLY_HOOK_DIR)] + ([os.environ["PYTHONPATH"]]
                                            if os.environ.get("PYTHONPATH") else [])),
               # vLLM 0.32's per-step cost grows with a realtime session (vLLM issue #58324); the fix
               # (vllm_adapter/patches.py) keeps it flat: on the H200 +5.7 ms per 1,000 tokens without,
               # none with, identical tokens (docs/gpu-results.md). VOXCAP_VLLM_SESSION_FIX=0: off
               SESSION_FIX_ENV: os.environ.get(SESSION_FIX_ENV, "1"),
               # the next chunk goes before the last token is back: the engine core fills it in
               # (vllm_adapter/patches.py; ~40 % of a 1-stream step on the H200 was that round trip).
               # VOXCAP_VLLM_TOKEN_CARRY=0: off, chunks wait for their token as in vLLM's server
               TOKEN_CARRY_ENV: os.environ.get(TOKEN_CARRY_ENV, "1"),
               # a step's audio chunks share one mel spectrogram + conv pass, a CUDA graph on a
               # GPU (vllm_adapter/audio_frontend.py). VOXCAP_VLLM_BATCHED_FRONTEND=0: per session
               FRONTEND_ENV: os.environ.get(FRONTEND_ENV, "1"),
               # vLLM's CPU build: its worker inside the engine core and the fork above, as on
               # one GPU (vllm_adapter/cpu_processes.py: 42 s → 18.5 s to ready here). =0: as vLLM does
               CPU_AS_GPU_ENV: os.environ.get(CPU_AS_GPU_ENV, "1"),
               # vLLM's ZeroMQ sockets and rendezvous file in this engine's folder, removed with it
               **rpc_env(self._workdir), RENDEZVOUS_DIR_ENV: str(self._workdir),
               # its TCP ports (gloo, NCCL) on loopback, whatever the host name resolves to
               **loopback_env(),
               # without -v the terminal shows voxcap's own line for a failure, never vLLM's
               # tracebacks: its log and its children's stderr go to files, logged on failure
               "VLLM_LOGGING_CONFIG_PATH": str(write_logging_config(
                   self._workdir / "logging.json", "INFO" if self._verbose else "CRITICAL"))}
        if not self._verbose:
            env[CHILD_STDERR_ENV] = str(self._child_stderr)
        self.vllm_env = env  # what vLLM's processes were started with (for tests and diagnostics)
        self._saved_env = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        if not self._verbose:
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        os.environ.setdefault("VLLM_NO_USAGE_STATS", "1")
        os.environ.setdefault("DO_NOT_TRACK", "1")
        self._tail = StageTail(stage_file, self._stage_progress).start()
        tie_forked_children()  # a forked engine core dies with the app, like a spawned one
        try:
            try:
                engine = await self._create_engine(build)
            except Exception:
                if not (env["VLLM_WORKER_MULTIPROC_METHOD"] == "fork" and _fork_refused(self._tail)):
                    raise
                # something in this process created CUDA state before vLLM forked: start again
                log.warning("vLLM's forked engine core cannot use CUDA; starting it with spawn",
                            exc_info=True)
                self._tail.errors.clear()
                env["VLLM_WORKER_MULTIPROC_METHOD"] = os.environ["VLLM_WORKER_MULTIPROC_METHOD"] = "spawn"
                engine = await self._create_engine(build)
            # what vLLM used: it spawns when CUDA is set up here, and its CPU platform unless
            # this process runs one OpenMP thread (vllm_adapter/cpu_processes.py)
            self.start_method = os.environ.get("VLLM_WORKER_MULTIPROC_METHOD", "")
        finally:
            self._tail.stop()
            self._restore_env()  # vLLM's processes are running: they have their copy
        self._engine = engine
        try:
            await self._serve(engine)
        finally:
            self._engine = None
            engine.shutdown()
            del engine
            gc.collect()  # let AsyncLLM finalise now, not at interpreter exit
            self._emit(EngineStopped())

    def _stage_progress(self, stage: str, detail: str = "") -> None:
        """A stage vLLM's processes reached, with a note where the wait needs one."""
        note = FIRST_JIT_NOTE if stage == "capturing graphs" and self.first_jit else ""
        self._progress(stage, detail, note)

    async def _create_engine(self, build: str):
        args = self.engine_args(build)  # before vLLM's import (~12 s of CPU): a refusal is at once
        # torch's and vLLM's import warnings, and all that vLLM's processes write to stderr,
        # go to the library log unless -v asked for vLLM's log (logs.py)
        with logs.library_output_to_log(enabled=not self._verbose):
            from vllm.engine.arg_utils import AsyncEngineArgs

            self._progress("starting engine process")
            # No local holds the engine: vLLM keeps a traceback of this frame from an exception
            # it handles during start-up, and a live local would keep AsyncLLM alive until exit.
            return internals.async_llm_class().from_engine_args(AsyncEngineArgs(**args),
                                             stat_loggers=[_stat_logger_factory(self.stats)])

    def engine_args(self, build: str) -> dict:
        """vLLM's engine arguments for these settings (the model folder checked first)."""
        info = self.model_info or self._inspect_model()
        s = self.settings
        gpu = _gpu_facts() if build == "cuda" else GpuFacts()
        self.first_jit = build == "cuda" and first_jit_compile(gpu.compute_capability)
        fit = verdict(info, Sizing.of(s, build), gpu)  # the words doctor and the dialogs use
        choice = fit.choice
        if build == "cuda" and not fit.fits and s.gpu_memory_utilization is None:
            raise EngineError(f"{fit.line[:1].upper()}{fit.line[1:]}.", fit.fix)
        if choice.streams < s.max_streams:  # only the automatic choice offers fewer streams
            s = self.settings = replace(s, max_streams=choice.streams,
                                        capture_sizes=default_capture_sizes(choice.streams))
        self.precision_choice = choice
        dtype = s.dtype if s.dtype != "auto" else choice.dtype
        dtype_bytes = 4 if dtype == "float32" else 2
        self.kv_plan_dtype_bytes = choice.precision.kv_bytes or dtype_bytes
        self.kv_plan = memory.plan_for(info, s.max_model_len, self.kv_plan_dtype_bytes, build,
                                       s.step_tokens)
        kv_bytes = self.kv_budget = memory.kv_budget_bytes(self.kv_plan, s.max_streams, s.kv_cache_gib)
        memory.check_budget(self.kv_plan, kv_bytes, s.max_streams)
        self.weights_estimate_bytes = memory.weights_bytes(info, dtype_bytes,
                                                           choice.precision.linear_bytes)[0]
        utilization = s.gpu_memory_utilization
        if utilization is None:
            utilization = 0.9  # CPU build: vLLM only checks it against host memory
            if build == "cuda" and gpu.total_bytes is not None:
                need = memory.footprint_bytes(self.weights_estimate_bytes, kv_bytes)
                utilization = memory.gpu_memory_utilization_for(need, gpu.total_bytes)
        model = model_dir_for_vllm(info, paths.cache_dir(), dtype)
        tokenizer = tokenizer_dir_for_delay(info, s.delay_ms, paths.cache_dir())
        if tokenizer == info.path:  # the model folder itself costs 2 s of failing config
            tokenizer = model  # retries per start once the weights are there (not the view)
        compilation = {"cudagraph_mode": s.graph_mode,
                       "cudagraph_capture_sizes": list(s.capture_sizes)}
        args = dict(
            model=str(model), tokenizer=str(tokenizer),
            tokenizer_mode="mistral",
            config_format="mistral", load_format="dummy" if s.dummy_weights else "mistral",
            max_model_len=s.max_model_len, max_num_seqs=s.max_streams,
            limit_mm_per_prompt={"audio": 1}, compilation_config=compilation,
            kv_cache_memory_bytes=kv_bytes, gpu_memory_utilization=utilization,
            max_num_batched_tokens=s.step_tokens,
            enforce_eager=s.enforce_eager, disable_log_stats=False,
            cudagraph_metrics=True,
            # Every streaming chunk's audio features are unique, so vLLM's multimodal cache (4 GiB
            # by default) only fills: measured +8 MB/min of engine-core memory when fed in real
            # time, flat with the cache off.
            mm_processor_cache_gb=0,
        )
        args.update(choice.engine_args())  # dtype, online FP8 or MXFP4, FP8 KV (sizing/precision.py)
        args["dtype"] = dtype
        args.update(s.extra_engine_args)  # settings' own engine args win (benchmarks, experts)
        return args

    async def _serve(self, engine) -> None:
        s = self.settings
        self._model_config = engine.model_config
        self._model_cls = internals.model_class(engine.model_config)
        # the plugin ran in this process with the environment the engine core got
        self.token_carry = vllm_patches.token_carry_applied()
        tok = internals.tokenizer(engine.model_config)
        encoder = tok.instruct.audio_encoder
        ac = encoder.audio_config
        self._prompt_len = len(tok.instruct.start() + encoder.encode_streaming_tokens())
        self._step_samples = int(ac.raw_audio_length_per_tok)
        left_pad = int(ac.streaming_n_left_pad_tokens or 0) * self._step_samples
        look_ahead = int(ac.sampling_rate * (ac.streaming_look_ahead_ms or 0) / 1000)
        self._first_step_samples = self._prompt_len * self._step_samples + look_ahead - left_pad
        cc = engine.vllm_config.compilation_config
        resolved = getattr(cc.cudagraph_mode, "name", str(cc.cudagraph_mode))
        notes = []
        if resolved != s.graph_mode:
            why = ("enforce_eager disables graphs" if s.enforce_eager else
                   "this platform does not support CUDA graphs" if engine_platform.BUILD == "cpu"
                   else "vLLM overrode the setting")
            notes.append(f"requested {s.graph_mode}, vLLM runs {resolved}: {why}")
        assert self.model_info is not None and self.kv_plan is not None  # by engine_args
        resolved_plan = self.kv_plan
        block_size = engine.vllm_config.cache_config.block_size
        if isinstance(block_size, int):
            resolved_plan = memory.kv_plan(self.model_info.params, s.max_model_len,
                                           self.kv_plan_dtype_bytes, block_size,
                                           engine.vllm_config.max_in_flight_tokens)
        if resolved_plan != self.kv_plan:  # vLLM chose other block sizes or batches than assumed
            log.warning("KV-cache layout differs from voxcap's estimate: %s (estimated %s)",
                        resolved_plan, self.kv_plan)
            notes.append(f"vLLM lays out {memory.gib(resolved_plan.session_bytes)} of KV cache a "
                         f"session, voxcap estimated {memory.gib(self.kv_plan.session_bytes)}")
        choice = self.precision_choice
        if choice is not None and choice.streams < choice.streams_asked:
            notes.append(f"{choice.streams} stream(s) of {choice.streams_asked}: this GPU has room "
                         "for one source at a time")
        capacity = kv_cache_capacity(self._tail.lines)
        if capacity and capacity[1] < s.max_streams:
            notes.append(f"the KV cache fits {capacity[1]:.2f} full-length sessions for "
                         f"{s.max_streams} streams: raise the KV-cache budget")
        info = EngineReady(
            requested_graph_mode=s.graph_mode, resolved_graph_mode=resolved,
            capture_sizes=tuple(cc.cudagraph_capture_sizes or ()),
            start_seconds=time.perf_counter() - self._t0, device=engine_platform.device_name(),
            transcription_delay_ms=int(ac.transcription_delay_ms),
            max_model_len=engine.model_config.max_model_len, max_streams=s.max_streams,
            kv_cache_tokens=capacity[0] if capacity else None,
            kv_cache_sessions=capacity[1] if capacity else None, notes=tuple(notes),
            precision=choice.label if choice else "", precision_line=choice.line if choice else "",
        )
        self._set_ready(info, f"{resolved} on {info.device}")
        watcher = asyncio.create_task(self._watch(engine))
        await self._stop_requested()
        watcher.cancel()
        for st in list(self._streams.values()):
            if not st.done.is_set():
                await self._abort(st.stream_id)

    async def _watch(self, engine) -> None:
        """Report a dead engine core even when no stream is running."""
        while True:
            await asyncio.sleep(0.5)
            if engine.errored:
                self._fail(*self._explain(engine.dead_error))
                return

    # ------------------------------------------------------------- stream tasks ----
    async def _open(self, stream_id: str, label: str) -> None:
        busy = len(self.open_stream_ids())  # checked on the loop thread: no race between callers
        if busy >= self.settings.max_streams:
            # vLLM would queue it silently while its audio piles up: refuse instead
            raise EngineError(f"All {busy} stream slots of the engine are in use.",
                              "close a stream first, or restart the engine with more streams")
        rid = f"voxcap-{stream_id}-{uuid.uuid4().hex[:8]}"
        st = _Stream(stream_id, rid, asyncio.Queue(), label=label)
        self._streams[stream_id] = st
        self.stats.open(stream_id, self._first_step_samples, self._step_samples)
        st.task = asyncio.create_task(self._run_stream(st))

    def _push(self, stream_id: str, chunk: np.ndarray) -> None:
        st = self._streams.get(stream_id)
        if st is None or st.close_requested or st.aborted or st.done.is_set():
            return
        st.samples_in += chunk.size
        self.stats.audio_in(stream_id, chunk.size)
        st.audio.put_nowait(chunk)

    def _close(self, stream_id: str) -> None:
        st = self._streams.get(stream_id)
        if st is None or st.close_requested:
            return
        st.close_requested = True
        st.audio.put_nowait(None)

    async def _abort(self, stream_id: str) -> None:
        st = self._streams.get(stream_id)
        if st is None or st.done.is_set() or st.aborted:
            return
        st.aborted = True
        st.audio.put_nowait(None)
        if self._engine is not None:
            try:
                await self._engine.abort(st.request_id)
            except Exception:  # the stream's task is cancelled below either way
                log.warning("vLLM could not abort stream %s", stream_id, exc_info=True)
        if st.task is not None and not st.task.done():
            st.task.cancel()
            try:
                await st.task
            except asyncio.CancelledError:
                pass
            except Exception:  # its own end was reported by the task (StreamFinished)
                log.warning("stream %s ended with an error while aborted", stream_id,
                            exc_info=True)

    async def _run_stream(self, st: _Stream) -> None:
        from vllm.engine.protocol import StreamingInput
        from vllm.sampling_params import RequestOutputKind, SamplingParams

        engine, model_config = self._engine, self._model_config
        render = internals.prompt_renderer(engine, model_config)
        feed = TokenFeed(self.token_carry)

        async def audio():
            while (chunk := await st.audio.get()) is not None:
                yield chunk

        async def inputs():
            prompts = self._model_cls.buffer_realtime_audio(audio(), feed.queue, model_config)
            async for prompt in prompts:
                self.stats.prompt_sent(st.stream_id)
                yield StreamingInput(prompt=await render(prompt))

        params = SamplingParams(temperature=0.0, max_tokens=self._model_cls.realtime_max_tokens,
                                output_kind=RequestOutputKind.DELTA,
                                extra_args=(feed.sampling_extra_args() or {}) | stall_extra_args()
                                or None)
        reason, message = "flushed", ""
        try:
            async for out in engine.generate(prompt=inputs(), sampling_params=params,
                                             request_id=st.request_id):
                if self._take_output(st, out, feed):
                    break
            reason, message = self._how_it_ended(st)
        except asyncio.CancelledError:
            reason = "aborted"
        except Exception as exc:  # noqa: BLE001
            reason, message = self._failed(st, exc, engine)
        finally:
            self.stats.finish(st.stream_id)
            self._emit(StreamFinished(st.stream_id, reason, st.tokens,
                                      st.samples_in / SAMPLE_RATE, message))
            st.done.set()
            self._streams.pop(st.stream_id, None)  # bounded over hours of sessions

    def _take_output(self, st: _Stream, out, feed: TokenFeed) -> bool:
        """One of vLLM's outputs for the stream: its new tokens fed back and emitted; whether
        it was the last."""
        if not out.outputs:
            return False
        o = out.outputs[0]
        ids = tuple(o.token_ids)
        feed.output(ids)
        if not st.prompt_len and out.prompt_token_ids:
            st.prompt_len = len(out.prompt_token_ids)
        if ids:
            self.stats.token_back(st.stream_id, len(ids))
            self._emit_delta(st, o.text or "", ids)
        return out.finished

    def _how_it_ended(self, st: _Stream) -> tuple[str, str]:
        """Why a stream whose output ended without an error ended, and what to say of it."""
        if st.aborted:
            return "aborted", ""
        if (self._prompt_len + st.tokens >= self._model_config.max_model_len
                and not st.close_requested):
            return "max_length", "the session reached max_model_len"
        return "flushed", ""

    def _failed(self, st: _Stream, exc: Exception, engine) -> tuple[str, str]:
        """A stream's error: logged and explained (the whole engine failed if vLLM says so);
        an aborted stream's error is only its abort."""
        if st.aborted:
            return "aborted", ""
        log.exception("stream %s failed", st.stream_id)
        message, fix = self._explain(exc)
        if engine.errored:
            self._fail(message, fix)
        return "error", message

    def _emit_delta(self, st: _Stream, text: str, ids: tuple[int, ...]) -> None:
        step_s = self._step_samples / SAMPLE_RATE
        k = st.tokens
        st.tokens += len(ids)
        audio_s = st.samples_in / SAMPLE_RATE
        # Token k describes audio frame k (the model's delay is built into when it arrives);
        # flush tokens past the end of the audio are clamped to its end.
        start = min(k * step_s, audio_s)
        end = min((k + len(ids)) * step_s, audio_s)
        self._emit(TextDelta(st.stream_id, text, ids, k, start, end, time.time()))


START_METHOD_ENV = "VOXCAP_VLLM_START"


def start_method() -> str:
    """How vLLM starts its engine core: "fork" (default) or "spawn" ($VOXCAP_VLLM_START)."""
    method = os.environ.get(START_METHOD_ENV, "fork").strip().lower()
    if method not in ("fork", "spawn"):
        log.warning("%s=%r is not fork or spawn: using fork", START_METHOD_ENV, method)
        return "fork"
    return method


def _fork_refused(tail: StageTail) -> bool:
    tail.poll()
    return any("re-initialize CUDA in forked subprocess" in line for line in tail.errors)


def _gpu_facts() -> GpuFacts:
    """The GPU vLLM will use: NVML (sizing.verdict.read_gpu_facts), so that the app's own process
    creates no CUDA context (~0.5 GiB on the GPU) just to ask; torch (with its NVML-based check)
    if NVML cannot answer."""
    facts = read_gpu_facts()
    if facts is not None:
        return facts
    import torch

    free, total = torch.cuda.mem_get_info()
    return GpuFacts(total, free, None)


def _stat_logger_factory(stats: EngineStats):
    """A vLLM stat logger that records each step's runtime CUDA-graph mode into ``stats``."""
    base: Any = internals.stat_logger_base()  # vLLM's StatLoggerBase (not followed by mypy)

    class GraphModeLogger(base):
        def __init__(self, vllm_config, engine_index: int = 0):
            pass

        def record(self, scheduler_stats, iteration_stats, mm_cache_stats=None, engine_idx=0):
            cg = getattr(scheduler_stats, "cudagraph_stats", None) if scheduler_stats else None
            if cg is not None:
                stats.engine_step(str(getattr(cg, "runtime_mode", "")) or None)

        def log_engine_initialized(self):
            pass

    return GraphModeLogger
