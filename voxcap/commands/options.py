"""Command-line options shared by every command that starts an engine."""

from __future__ import annotations

import argparse
import json
import logging

from .. import logs
from ..app.remote_key import api_key
from ..app.settings import AppSettings
from ..engine.choice import EngineChoice
from ..engine.remote.settings import DEFAULT_MAX_BUFFER_S, RemoteSettings, default_api_key_path
from ..engine.settings import InProcessSettings
from ..errors import ConfigError
from ..settings_schema import add_setting_flags, flag_values, set_path

log = logging.getLogger(__name__)
_KEEP = object()


def add_engine_options(p: argparse.ArgumentParser, model_required: bool = True,
                       remote: bool = True, more_help: dict[str, str] | None = None) -> None:
    """Engine options. ``model_required``: the local engine needs --model (checked when the
    settings are built, since --engine remote does not). ``remote``: also --engine and the
    remote engine's options (not for ``voxcap serve``, which runs the engine itself).
    ``more_help``: words one command adds to a flag's help ({"delay_ms": "..."})."""
    p.set_defaults(model_required=model_required)
    g = p.add_argument_group("engine")
    more = dict(more_help or {})
    if remote:
        more["model_dir"] = "; with --engine remote: the name the server serves, like --server-model"
    add_setting_flags(g, EngineChoice, (["kind"] if remote else []) + [
        "model_dir", "dummy_weights", "graph_mode", "delay_ms", "max_model_len", "kv_cache_gib",
        "precision"], more_help=more)
    g.add_argument("--dtype", default="auto",
                   help="expert override of the precision's dtype: auto (bfloat16 on the GPU, "
                        "float16 before RTX 30, float32 on the CPU build), bfloat16, float16, float32")
    add_setting_flags(g, EngineChoice, ["enforce_eager"])
    g.add_argument("--engine-arg", action="append", default=[], metavar="KEY=VALUE",
                   help="expert: one more vLLM engine argument (VALUE as JSON, else text), e.g. "
                        "attention_config='{\"flash_attn_version\": 2}'; wins over voxcap's own")
    if not remote:
        return
    r = p.add_argument_group("remote engine (--engine remote)")
    add_setting_flags(r, EngineChoice, ["server_url", "server_model"])
    r.add_argument("--api-key-env", metavar="VAR",
                   help="environment variable holding the server's API key (sent as a bearer "
                        "token; never logged)")
    r.add_argument("--api-key-file", metavar="PATH",
                   help="file holding the API key, readable by its owner only (default: "
                        f"{default_api_key_path()} if it exists; for a server on this "
                        "computer, the key `voxcap serve` made here)")


def engine_settings(args, max_streams: int = 1, graph_mode: str | None = None,
                    max_buffer_s=_KEEP) -> InProcessSettings | RemoteSettings:
    """Validated settings from parsed options (raises ConfigError with the fix):
    ``RemoteSettings`` with --engine remote (``max_buffer_s``: audio held per stream for the
    server, None = unbounded, e.g. for files), else ``InProcessSettings``. The same
    ``EngineChoice`` the app keeps, built from the flags."""
    choice = settings_from_flags(args).engine
    if choice.remote:
        return remote_settings(args, max_streams, max_buffer_s)
    if not choice.model_dir and getattr(args, "model_required", True):
        raise ConfigError("No model: the local engine needs --model DIR.",
                          "give the model directory, or use --engine remote --server URL",
                          setting="model_dir")
    if graph_mode:
        choice.graph_mode = graph_mode
    return choice.settings_for(max_streams=max_streams, dtype=args.dtype,
                               extra_engine_args=parse_engine_args(getattr(args, "engine_arg", [])))


def settings_from_flags(args) -> AppSettings:
    """The defaults with the settings given on the command line (--server alone does not
    choose the remote engine here: --engine remote does)."""
    settings = AppSettings()
    for path, value in flag_values(args, AppSettings).items():
        set_path(settings, path, value)
    return settings


def parse_engine_args(items: list[str]) -> dict:
    """``KEY=VALUE`` items as vLLM engine arguments (VALUE read as JSON where it is JSON)."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip().isidentifier():
            raise ConfigError(f"--engine-arg {item!r} is not KEY=VALUE.",
                              "e.g. --engine-arg attention_config='{\"flash_attn_version\": 2}'")
        try:
            out[key.strip()] = json.loads(value)
        except json.JSONDecodeError:  # not JSON: the text itself (e.g. quantization=fp8)
            log.debug("--engine-arg %s: not JSON, passed as text", key.strip())
            out[key.strip()] = value
    return out


def remote_settings(args, max_streams: int = 1, max_buffer_s=_KEEP) -> RemoteSettings:
    choice = settings_from_flags(args).engine
    if not choice.server_url:
        raise ConfigError("--engine remote needs the server's address.",
                          "add --server ws://HOST:PORT (the vLLM server's realtime endpoint)",
                          setting="server_url")
    if choice.server_model and choice.model_dir and choice.server_model != choice.model_dir:
        raise ConfigError("--model and --server-model name different models.",
                          "give only --server-model NAME with --engine remote", setting="server_model")
    choice.kind = "remote"
    choice.server_model = choice.server_model or choice.model_dir  # --model: the server's name
    settings = choice.settings_for(
        max_streams=max_streams,
        api_key=api_key(choice.server_url, args.api_key_env, args.api_key_file),
        max_buffer_s=DEFAULT_MAX_BUFFER_S if max_buffer_s is _KEEP else max_buffer_s)
    assert isinstance(settings, RemoteSettings)  # kind "remote" chose it
    return settings


def make_engine(args, on_event=None, max_streams: int = 1, graph_mode: str | None = None,
                max_buffer_s=_KEEP, settings=None, rollover: bool = True):
    """The engine the options ask for (not started): in-process vLLM or a remote server
    (``engine.factory``), wrapped in session rollover unless ``rollover`` is False (bench
    measures the bare engine). ``settings``: already built by ``engine_settings``."""
    from ..engine.factory import bare_engine, build_engine

    settings = settings or engine_settings(args, max_streams, graph_mode, max_buffer_s)
    verbose = logs.engine_verbose(logs.level_of(args))
    if rollover:
        return build_engine(settings, on_event=on_event, verbose=verbose)
    return bare_engine(settings, on_event=on_event, verbose=verbose)
