"""``voxcap serve``: vLLM's own OpenAI-compatible server for Voxtral Realtime, set up as voxcap's
in-process engine would be, for an app on another computer (``--engine remote``).

What it starts is vLLM's server (``python -m vllm.entrypoints.openai.api_server``), with the
in-process engine's vLLM arguments (``LocalEngine.engine_args``: KV cache sized for
``--max-streams`` sessions on this GPU and the gpu_memory_utilization that lets it start beside
other programs, FULL_DECODE_ONLY, the step token budget, the multimodal cache off, and any
setting added there later) as flags (engine/server/args.py), voxcap's vLLM plugin with the
session fix on, an API key, and loopback unless ``--host`` says otherwise. It prints the
address and the key file to give the app, and stops the server on Ctrl-C; the server dies with
voxcap however voxcap dies (engine/server/process.py).
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import signal
import socket
import sys
from pathlib import Path

from .. import logs, paths
from ..errors import ConfigError, EngineError
from ..netaddr import is_loopback_host
from .options import add_engine_options, engine_settings

log = logging.getLogger(__name__)
DEFAULT_PORT = 8000
UNENCRYPTED_NOTE = ("Note: on {host} the audio, the captions and the API key travel unencrypted: "
                    "beyond a trusted network put TLS in front (docs/guide/gpu-server.md, \"TLS, "
                    "and what else listens\") or use an ssh tunnel.")


def add_parser(sub) -> list[str]:
    p = sub.add_parser(
        "serve", help="start vLLM's server for Voxtral Realtime on this GPU, for the app elsewhere",
        description="Starts vLLM's own OpenAI-compatible server (its /v1/realtime endpoint) with "
                    "the settings voxcap's in-process engine would use on this machine, and prints "
                    "the address and API key file to give the app on another computer "
                    "(voxcap gui: \"Use a vLLM server\"; or --engine remote --server ws://...). "
                    "Ctrl-C stops it.")
    add_engine_options(p, remote=False)
    s = p.add_argument_group("server")
    s.add_argument("--max-streams", type=int, default=2, metavar="N",
                   help="caption streams served at once on each GPU; the KV cache is sized for "
                        "them (default 2: one app captioning \"Both\")")
    s.add_argument("--gpus", type=int, default=1, metavar="N",
                   help="serve from N GPUs of this box behind the one address: one vLLM engine "
                        "each, each sized as one GPU (vLLM's data parallel; default 1)")
    s.add_argument("--api-servers", type=int, default=None, metavar="N",
                   help="vLLM API server processes sharing the port, for the sessions' websocket "
                        "and audio work (default: one per 24 streams served, up to the cores "
                        "left after the engines; more than 1 runs `vllm serve`: GPU build only)")
    s.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this computer only; 0.0.0.0 for "
                        "every network interface)")
    s.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"TCP port (default {DEFAULT_PORT})")
    s.add_argument("--served-model-name", metavar="NAME",
                   help="the model's name for clients (default: the model folder's name)")
    s.add_argument("--api-key-env", metavar="VAR",
                   help="environment variable holding the API key to require (default: a key "
                        "generated once and kept in --api-key-file)")
    s.add_argument("--api-key-file", metavar="PATH",
                   help="the key file, created readable by you only if missing (default: "
                        "voxcap's config folder, serve-api-key)")
    s.add_argument("--vllm-args", default="", metavar="\"FLAGS\"",
                   help="more flags for vLLM's server, after voxcap's (they win), e.g. "
                        "--vllm-args=\"--enable-log-requests\"")
    s.add_argument("--start-timeout", type=float, default=1800.0, metavar="S",
                   help="give up when the server is not up after this long (default 1800)")
    s.add_argument("--print-command", action="store_true",
                   help="print vLLM's command line (without the key) and exit")
    return ["serve"]


def run(args) -> int:
    from ..engine.remote.settings import api_key_from_env
    from ..engine.server import key as server_key
    from ..engine.server.api_servers import api_servers_for
    from ..engine.server.args import engine_args_for, server_command
    from ..engine.server.gpus import parallel_from_vllm_args, serve_plan
    from ..engine.vllm_adapter import platform as engine_platform
    from ..engine.vllm_adapter.audio_frontend import FRONTEND_ENV
    from ..engine.vllm_adapter.cpu_processes import CPU_AS_GPU_ENV
    from ..engine.vllm_adapter.cpu_processes import START_ENV as START_METHOD_ENV
    from ..engine.vllm_adapter.env import cache_env, loopback_env
    from ..engine.vllm_adapter.patches import SESSION_FIX_ENV

    settings = engine_settings(args, max_streams=args.max_streams)
    if not 1 <= args.port <= 65535:
        raise ConfigError(f"Port {args.port} is not a TCP port.", "use 1-65535, e.g. --port 8000")
    try:
        build = engine_platform.check_platform()
    except EngineError as exc:  # the usual fix offers a server: this is to become that server
        raise EngineError(exc.message, "run `voxcap serve` on a computer with an NVIDIA GPU and "
                          "voxcap's GPU build (installer/install.sh --gpu, or "
                          f"`{engine_platform.PIP} install 'voxcap[gpu]'`)") from None
    try:
        extra = shlex.split(args.vllm_args)
    except ValueError as exc:
        raise ConfigError(f"--vllm-args cannot be read: {exc}.",
                          "quote it as one string, e.g. --vllm-args=\"--enable-log-requests\"") from None
    extra, args.gpus, args.api_servers = parallel_from_vllm_args(extra, args.gpus, args.api_servers)
    if args.api_servers is None:
        args.api_servers = api_servers_for(args.max_streams * args.gpus, args.gpus, build)
    gpus = serve_plan(args.gpus, args.api_servers, build)  # refused here, before vLLM starts
    engine_args, info = engine_args_for(settings, build, gpus)
    served = args.served_model_name or info.path.name
    command = server_command(engine_args, host=args.host, port=args.port, served_name=served,
                             extra=extra, gpus=args.gpus, api_servers=args.api_servers)
    if args.print_command:
        print(shlex.join(command))
        return 0
    _check_port_free(args.host, args.port)
    if args.api_key_env:
        key, key_file, created = api_key_from_env(args.api_key_env), None, False
    else:
        key_file = Path(args.api_key_file).expanduser() if args.api_key_file else \
            server_key.default_key_path()
        key, created = server_key.ensure_key(key_file)
    session_fix = os.environ.get(SESSION_FIX_ENV, "1")
    env = {"VLLM_API_KEY": key, SESSION_FIX_ENV: session_fix, "VLLM_NO_USAGE_STATS": "1",
           # a step's chunks in one front-end pass (vllm_adapter/audio_frontend.py); =0: per session
           FRONTEND_ENV: os.environ.get(FRONTEND_ENV, "1"),
           "DO_NOT_TRACK": "1", **cache_env(),
           # vLLM's own TCP ports (gloo, NCCL) on loopback whatever the host name resolves to
           **loopback_env()}
    if build == "cpu" and args.api_servers == 1:
        # vLLM's CPU build: its processes as on GPUs (vllm_adapter/cpu_processes.py): the engine
        # cores forked from the server (which vLLM's command line would spawn) where it runs one
        # OpenMP thread, and with one GPU the worker inside the engine core (with several, vLLM
        # gives each core a worker process, forked, as on GPUs): an import of torch and vLLM
        # fewer per process, ~20 s of CPU each here. VOXCAP_VLLM_CPU_AS_GPU=0: as vLLM does
        env[CPU_AS_GPU_ENV] = os.environ.get(CPU_AS_GPU_ENV, "1")
        env[START_METHOD_ENV] = os.environ.get(START_METHOD_ENV, "fork")
    fix_on = session_fix.strip().lower() in ("1", "true", "yes", "on")  # as vllm_patches reads it
    return _serve(args, command, env, key_file, created, served, settings, fix_on)


def _serve(args, command, extra_env, key_file, created, served, settings, session_fix) -> int:
    from ..engine.server.process import ServerProcess, child_env
    from ..engine.server.stages import ServerStages, new_workdir
    from ..engine.vllm_adapter.env import rpc_env
    from ..engine.vllm_adapter.rendezvous import RENDEZVOUS_DIR_ENV

    log_path = paths.state_dir() / "vllm-server.log"
    # the stage file and vLLM's logging config, read by the server's processes while they live
    workdir = new_workdir()
    stages = ServerStages(workdir, sys.stdout)
    # vLLM's ZeroMQ sockets and rendezvous file in the run's folder, removed with it (else left
    # in the temporary one)
    server = ServerProcess(command, child_env({**extra_env, **stages.env(), **rpc_env(workdir),
                                               RENDEZVOUS_DIR_ENV: str(workdir)}), log_path)
    print(f"Starting vLLM's server for {served} on {args.host}:{args.port} (its log: {log_path}); "
          "the first start on a GPU takes a few minutes.", flush=True)
    from ..engine.vllm_adapter import platform as engine_platform

    if not is_loopback_host(args.host):
        print(UNENCRYPTED_NOTE.format(host=args.host), flush=True)
    if engine_platform.BUILD == "cpu":
        print("Note: this is vLLM's CPU build: for checks only, far slower than real time with "
              "the real model.", flush=True)
    stop = _StopOnSignals()
    server.start()
    stages.start()
    if logs.engine_verbose(logs.level_of(args)):  # -v: vLLM's own log on the terminal too
        server.follow(sys.stderr)
    try:
        try:
            server.wait_healthy(args.host, args.port, args.start_timeout)
        finally:
            stages.stop()
        stages.ready()
        _print_ready(args, served, settings, key_file, created, session_fix)
        _say_what_listens(server.pid, args.port)
        print("Ctrl-C stops the server.", flush=True)
        code = server.wait()
        raise ConfigError(f"vLLM's server stopped by itself (exit code {code}): {server.last_error()}",
                          f"see its log {log_path}")
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM, SIGHUP (_StopOnSignals)
        _say("Stopping vLLM's server… (Ctrl-C again stops it at once)")
        try:
            stopped = server.stop()
        except KeyboardInterrupt:
            stopped = server.kill()
        _say(f"vLLM's server stopped (exit code {stopped}).")
        return 0
    finally:
        if server.exited() is None:
            server.kill()
        stop.restore()
        shutil.rmtree(workdir, ignore_errors=True)


def _print_ready(args, served, settings, key_file, created, session_fix) -> None:
    host = args.host
    public = host not in ("127.0.0.1", "localhost", "::1")
    url = f"ws://{reachable_host(host)}:{args.port}"
    key_line = (f"the API key is in {key_file} ({'new, ' if created else ''}readable by you only)"
                if key_file else f"the API key is the one in ${args.api_key_env}")
    streams = (f"{settings.max_streams * args.gpus} streams ({settings.max_streams} on each of "
               f"{args.gpus} GPUs)" if args.gpus > 1 else f"{settings.max_streams} streams")
    api = f", {args.api_servers} API server processes" if args.api_servers > 1 else ""
    print(f"\nReady: {url} — model {served}, up to {streams}{api}, session fix "
          f"{'on' if session_fix else 'off'}; {key_line}.", flush=True)
    copy = (f"copy {key_file} there as ~/.config/voxcap/remote-api-key (chmod 600)" if key_file
            else f"put the key from ${args.api_key_env} in ~/.config/voxcap/remote-api-key there "
                 "(chmod 600)")
    print(f"On the computer that shows the captions: {copy}, then\n"
          f"  voxcap gui → \"Use a vLLM server\", address {url}, the key from that file; or\n"
          f"  voxcap live --source system --engine remote --server {url}", flush=True)
    if not public:
        print(f"It listens on {host} only: this computer can connect, others cannot. For another "
              f"computer: `ssh -N -L {args.port}:127.0.0.1:{args.port} {reachable_host('0.0.0.0')}` "
              f"there (then ws://127.0.0.1:{args.port}), or --host 0.0.0.0 on a trusted network.",
              flush=True)


def _say_what_listens(server_pid: int | None, port: int) -> None:
    """What the server's processes listen on, read from the system (not what was asked for):
    the API's address, and vLLM's own ports (no key: on loopback only, vllm_adapter/env.py
    loopback_env), with a warning when one is elsewhere."""
    from ..listeners import listening_addresses, process_tree
    from ..netaddr import url_host

    if server_pid is None:
        return
    found = listening_addresses(process_tree(server_pid))
    api = sorted({url_host(a) for a, p in found if p == port})
    own = [(a, p) for a, p in found if p != port]
    places = sorted({url_host(a) for a, _ in own})
    print(f"Listening (as measured): {', '.join(api) or '?'} port {port} (the API: key required); "
          f"vLLM's own {len(own)} ports: " + (f"on {', '.join(places)}" if own else "none") + ".",
          flush=True)
    exposed = sorted({f"{url_host(a)}:{p}" for a, p in own if not is_loopback_host(a)})
    if exposed:
        print(f"Warning: vLLM's own ports {', '.join(exposed[:4])} (no key) are not on loopback: "
              "unset GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME / VLLM_HOST_IP if you set them, or "
              "keep this box off untrusted networks.", flush=True)


def _check_port_free(host: str, port: int) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            log.info("port %d on %s is not free", port, host, exc_info=True)
            raise ConfigError(f"Cannot listen on {host}:{port}: {exc.strerror or exc}.",
                              "stop what uses that port (`ss -ltnp` names it) or pick another "
                              "with --port; --host must be an address of this computer") from None


class _StopOnSignals:
    """Ctrl-C, SIGTERM and SIGHUP (a closed terminal, a logout) stop the server. SIGINT too is
    set here: a process started in the background of a script inherits it ignored."""

    def __init__(self) -> None:
        self._saved = {}
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            self._saved[sig] = signal.signal(sig, self._raise)

    @staticmethod
    def _raise(signum, frame):
        raise KeyboardInterrupt

    def restore(self) -> None:
        for sig, handler in self._saved.items():
            signal.signal(sig, handler)


def reachable_host(host: str) -> str:
    """The address another computer uses for a server bound to ``host``: for every interface
    (0.0.0.0, ::) this computer's address on its network, as the caption page's QR code gives
    it (netaddr.lan_address), not a host name the other computer may not resolve."""
    from ..netaddr import lan_address, url_host

    return url_host(lan_address() if host in ("0.0.0.0", "::", "") else host)


def _say(line: str) -> None:
    """A line on the terminal while stopping; a terminal that is gone (SIGHUP: writes fail)
    must not keep the server from being stopped."""
    try:
        print(line, flush=True)
    except OSError:
        log.info("terminal gone: %s", line)
