"""The app's words for the settings and advice a core text names (``voxcap.setting_refs``): a
setting by where Settings shows it ("Settings → Engine → Max session length"), made from its
declaration (label, choices); advice by the button that does it (Help → Copy diagnostics, the
welcome dialog's Download). Every text from the core that the app shows (engine status, notices,
folder checks) goes through ``for_the_app``; the terminal words the same markers as flags
(``commands.flag_words``). Commands that are truly the answer (``voxcap serve`` on the GPU
computer) are written as they are."""

from __future__ import annotations

import re

from ...engine.choice import EngineChoice
from ...errors import VoxcapError
from ...setting_refs import worded
from ...settings_schema import specs

SPECS = specs(EngineChoice)
ENGINE = "Settings → Engine"
SERVER = f"{ENGINE}: “A vLLM server”, and its address in Server"


def _words(text: str) -> str:
    """A label or a choice as a sentence names it: no mnemonic, no words in brackets."""
    return re.sub(r" \(.*\)", "", text.replace("&", "")).rstrip(":")


def where_in_settings(name: str, value: object = None) -> str:
    """Where Settings shows the engine setting ``name`` (set to ``value``, for a choice):
    "Settings → Engine → Max session length", "“Random weights” in Settings → Engine"."""
    spec = SPECS[name]
    if value is not None and spec.choices and name == "kind":  # the engine itself: its choice
        return f"{ENGINE}: “{_words(dict(spec.choices)[value])}”"
    if not spec.choices and spec.low is None and spec.metavar is None:  # a check box
        return f"“{_words(spec.label)}” in {ENGINE}"
    return f"{ENGINE} → {_words(spec.label)}"


RANDOM = _words(SPECS["dummy_weights"].label)
DIAGNOSTICS = "use Help → Copy diagnostics for the log's end and report it"
ADVICE = {
    "use_server": SERVER,
    "server_here": SERVER,
    "verbose": DIAGNOSTICS,
    "verbose_log": DIAGNOSTICS,
    "get_model": "(about 9 GB) with “Download the model” in the welcome dialog (Start captioning "
                 "opens it while no model is set)",
    "self_check": f"tick “{RANDOM}” in {ENGINE} for a self-check",
    "unless_dummy": f"unless “{RANDOM}” is ticked in {ENGINE}",
    "api_key_flags": "",  # the app reads the key file voxcap keeps; no other way to give one
    # the source is chosen in the main window's list, not in Settings
    "use_source": "choose one in the Source list",
    "pass_source": "choose it in the Source list",
    # translation models: Settings → Translation → Translation models
    "models_from_file": "from a model file (Settings → Translation: Install from a file)",
    "models_index": "another models index",
    "models_folder": "the models' folder",
    "models_download": "download {value} in Settings → Translation → Translation models",
    "models_reinstall": "remove {value} in Settings → Translation → Translation models, then "
                        "download it again",
}


def say_in_the_app(name: str, value: str) -> str:
    """One marker in the app's words: the advice, or where Settings shows the setting."""
    if name in ADVICE:
        return ADVICE[name].replace("{value}", value)
    if name == "source":
        return "the microphone in the Source list" if value == "mic" else "the Source list"
    if name not in SPECS:
        return name.replace("_", " ")
    spec = SPECS[name]
    if name == "kind" and value:
        return where_in_settings(name, value)
    if value and spec.metavar and not spec.choices and value != spec.metavar:  # e.g. an address
        return f"{value} in {where_in_settings(name)}"
    return where_in_settings(name)


def for_the_app(text: str) -> str:
    """A core text as the app says it."""
    return worded(text, say_in_the_app)


def error_for_the_app(exc: VoxcapError) -> tuple[str, str]:
    """(message, fix) of a core error in the app's words; a ``ConfigError`` that names its
    setting says where Settings shows it."""
    message, fix = for_the_app(exc.message), for_the_app(exc.fix)
    name = getattr(exc, "setting", "")
    if name in SPECS and where_in_settings(name) not in f"{message} {fix}":
        fix = f"{fix} ({where_in_settings(name)})" if fix else where_in_settings(name)
    return message, fix
