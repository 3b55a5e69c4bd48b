"""``voxcap prepare``: fill vLLM's caches so that the app's first engine start is a warm one.

Without ``--model`` (the installer runs this): vLLM's model-class inspection is cached. With
``--model DIR`` (the app runs this while the weights download; a person may run it after putting
a model in place): an engine with the app's settings and stand-in weights is started on DIR and
stopped, which leaves its compiled code and kernels in the caches the real start reads
(``engine.prepare``). DIR needs params.json and tekken.json; the weights need not be there yet.
"""

from __future__ import annotations

import dataclasses
import json
import time

from ..app.settings import AppSettings, load_settings
from ..errors import ConfigError
from ..settings_schema import add_setting_flags


def add_parser(sub) -> list[str]:
    p = sub.add_parser("prepare", help="fill vLLM's caches now so the app's first start is quick",
                       description="Without --model: cache vLLM's inspection of the model class "
                                   "(the installer runs this). With --model DIR: also start and stop "
                                   "an engine with the app's settings and random weights on DIR, "
                                   "which compiles what the app's first start would (about a "
                                   "minute on a GPU). DIR needs params.json and tekken.json only.")
    add_setting_flags(p, AppSettings, ["model_dir"],
                      more_help={"model_dir": "; the one the app will use"})
    p.add_argument("--engine-settings", metavar="JSON",
                   help="the engine settings as JSON (default: the app's saved settings, with "
                        "--model as the model folder)")
    p.add_argument("--timeout", type=float, default=900.0, metavar="S",
                   help="give up on the engine after this many seconds (default 900)")
    return ["prepare"]


def _settings(args):
    from ..engine.settings import InProcessSettings

    if args.engine_settings:
        try:
            fields = json.loads(args.engine_settings)
            return InProcessSettings(**{**fields, "model_dir": args.model}).validated()
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"--engine-settings is not valid: {exc}",
                              "give the JSON of an InProcessSettings") from None
    app_settings, _problem = load_settings()  # a problem is the app's to show; defaults are fine
    app_settings.engine = dataclasses.replace(app_settings.engine, kind="local",
                                              model_dir=args.model, dummy_weights=False)
    return app_settings.engine_settings()


def run(args) -> int:
    from ..engine.vllm_adapter import platform as engine_platform

    if engine_platform.installed_build()[0] is None:
        raise ConfigError("vLLM is not installed: there is nothing to prepare.",
                          engine_platform.NO_VLLM_FIX)
    from ..engine.inprocess.prepare import fill_model_info_cache, prepared_settings

    if args.model:  # a folder that cannot be prepared is said at once, before vLLM's ~20 s of work
        from ..engine.model.folder import inspect_model_dir

        inspect_model_dir(args.model, dummy_weights=True)
    t0 = time.monotonic()
    path = fill_model_info_cache()
    print(f"vLLM's model-class inspection is cached ({path}) in {time.monotonic() - t0:.1f} s",
          flush=True)
    if not args.model:
        return 0
    from ..engine.inprocess.engine import LocalEngine

    settings = prepared_settings(_settings(args))
    t1 = time.monotonic()
    engine = LocalEngine(settings)
    try:
        engine.start()
        ready = engine.wait_ready(timeout=args.timeout)
    finally:
        engine.shutdown()
    print(f"engine prepared for {args.model} on {ready.device} ({ready.resolved_graph_mode}) in "
          f"{time.monotonic() - t1:.1f} s: the app's next start with these settings is a warm one",
          flush=True)
    return 0
