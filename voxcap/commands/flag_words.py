"""The terminal's words for the settings and advice a core text names (``voxcap.setting_refs``):
a setting by its flag, as its declaration gives it; advice as the commands' own flags say it.
Every text the commands print, and the log, goes through ``in_flags`` (the app words the same
markers as Settings' rows: ``gui.settings.setting_words``)."""

from __future__ import annotations

from functools import cache

from ..setting_refs import worded


@cache
def flag(name: str) -> str:
    """The command-line flag of setting ``name`` (``--max-model-len``)."""
    from ..app.settings import AppSettings  # when a text names one: not at every command's start
    from ..settings_schema import spec_named

    spec = spec_named(AppSettings, name)
    return spec.flag if spec is not None and spec.flag else f"--{name.replace('_', '-')}"


@cache
def _advice() -> dict[str, str]:
    server = f"{flag('kind')} remote {flag('server_url')} ws://HOST:8000"
    return {
        "use_server": server,
        "server_here": f"the app's \"Use a vLLM server\", or {server}",
        "verbose": "run again with --verbose and report it",
        "verbose_log": "start with --verbose for vLLM's log",
        "get_model": "with `voxcap download` (about 9 GB; --dir DIR picks the folder)",
        "self_check": f"use {flag('dummy_weights')} for a self-check",
        "unless_dummy": f"unless {flag('dummy_weights')} is given",
        "api_key_flags": ", or use --api-key-file PATH or --api-key-env VAR",
        "pass_source": f"pass its name as {flag('source')}",
        # voxcap translate-models' own options
        "models_from_file": "from a file with --from FILE",
        "models_index": "--index URL",
        "models_folder": "--dir DIR",
        "models_download": "voxcap translate-models download {value}",
        "models_reinstall": "voxcap translate-models remove {value}, then "
                            "voxcap translate-models download {value}",
    }


def _with_value(name: str, value: str) -> str:
    if name == "use_source":  # the source is the app's list, not a setting's row
        return f"use {flag('source')} {value}"
    return f"{flag(name)} {value}" if value else flag(name)


def say_as_flag(name: str, value: str) -> str:
    """One marker in the terminal's words: the advice, or the setting's flag and its value."""
    advice = _advice()
    return advice[name].replace("{value}", value) if name in advice else _with_value(name, value)


def in_flags(text: str) -> str:
    """A core text as the terminal says it."""
    return worded(text, say_as_flag)
