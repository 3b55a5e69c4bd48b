"""The settings file: readable, and what it asks for."""

from __future__ import annotations

from .base import (
    OK,
    REINSTALL,
    WARN,
    Check,
    Context,
    log,
)


def check_settings(ctx: Context, args) -> Check:
    try:
        from ...app.settings import ENGINE_STREAMS, RunOverrides, load_settings, settings_path
    except Exception as exc:  # noqa: BLE001
        log.info("doctor: the settings module does not load", exc_info=True)
        return Check("settings", "Settings", WARN, f"cannot read the app's settings: {exc}",
                     REINSTALL)
    path = settings_path()
    ctx.settings_path = str(path)
    saved, problem = load_settings()
    settings = RunOverrides.from_args(saved, args).apply()  # --model, --server... for this check
    choice = settings.engine
    ctx.engine = choice.kind
    ctx.model_dir = choice.model_dir
    ctx.dummy_weights = choice.dummy_weights
    ctx.server_url = choice.server_url
    ctx.max_model_len = choice.max_model_len
    ctx.kv_cache_gib = choice.kv_cache_gib
    ctx.precision = choice.precision
    ctx.streams = ENGINE_STREAMS
    details = {"path": str(path), "exists": path.exists(), "engine": ctx.engine,
               "model_dir": ctx.model_dir, "server_url": ctx.server_url,
               "max_model_len": ctx.max_model_len, "kv_cache_gib": ctx.kv_cache_gib,
               "precision": ctx.precision, "streams": ctx.streams}
    if problem:
        return Check("settings", "Settings", WARN, problem,
                     "open Settings in the app and set the values again", details)
    where = str(path) if path.exists() else f"none saved yet ({path}): defaults"
    engine = ("remote vLLM server" if ctx.engine == "remote" else "local engine (vLLM on this "
              "machine)")
    return Check("settings", "Settings", OK, f"{where}; {engine}", "", details)
