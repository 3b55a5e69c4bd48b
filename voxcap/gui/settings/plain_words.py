"""The core's messages, said in the app's words: a fix written for the terminal ("--engine remote
--server ws://HOST:8000") names the setting or the button instead ("Settings → Engine: “A vLLM
server”"). The terminal keeps the flags; every text from the core that the app shows (engine
status, notices, folder checks) goes through ``for_the_app``. Commands that are truly the answer
(``voxcap serve`` on the GPU computer) stay as they are.

A setting is named where Settings shows it (``where_in_settings``), made from its declaration
(its flag, label, choices): a ``ConfigError`` that names its setting, and any of the engine's
flags in a text, read the same. The few rules written here are whole phrasings that are not
one setting (the server's address in a sentence, ``--verbose``, ``voxcap download``)."""

from __future__ import annotations

import re

from ...engine.choice import EngineChoice
from ...settings_schema import specs

SPECS = specs(EngineChoice)
ENGINE = "Settings → Engine"
SERVER = f"{ENGINE}: “A vLLM server”, and its address in Server"
def _words(text: str) -> str:
    """A label or a choice as a sentence names it: no mnemonic, no words in brackets."""
    return re.sub(r" \(.*\)", "", text.replace("&", "")).rstrip(":")


def where_in_settings(name: str, value=None) -> str:
    """Where Settings shows the engine setting ``name`` (set to ``value``, for a choice):
    "Settings → Engine → Max session length", "“Random weights” in Settings → Engine"."""
    spec = SPECS[name]
    if value is not None and spec.choices and name == "kind":  # the engine itself: its choice
        return f"{ENGINE}: “{_words(dict(spec.choices)[value])}”"
    if not spec.choices and spec.low is None and spec.metavar is None:  # a check box
        return f"“{_words(spec.label)}” in {ENGINE}"
    return f"{ENGINE} → {_words(spec.label)}"


RANDOM = _words(SPECS["dummy_weights"].label)
_RULES = (  # (pattern, words): whole phrasings, before the settings' own flags
    (r"\(--engine remote --server ws://HOST:8000\)", f"({SERVER})"),
    (r"here the app's \"Use a vLLM server\", or --engine remote --server ws://HOST:8000",
     f"here {SERVER}"),
    (r", or use --api-key-file PATH or --api-key-env VAR", ""),
    (r"with `voxcap download` \(about 9 GB; --dir DIR picks the folder\)",
     "(about 9 GB) with “Download the model” in the welcome dialog (Start captioning opens it "
     "while no model is set)"),
    (r"unless --dummy-weights is given", f"unless “{RANDOM}” is ticked in {ENGINE}"),
    (r"and use --dummy-weights for a self-check", f"and tick “{RANDOM}” in {ENGINE} for a self-check"),
    (r", or Settings → Engine → Precision: FP8 weights, or --precision fp8\)", ")"),
    (r"(Settings → Engine → Precision: FP8 weights), or --precision fp8", r"\1"),
    (r"start with --verbose for vLLM's log|run again with --verbose and report it",
     "use Help → Copy diagnostics for the log's end and report it"),
    (r"e\.g\. --server (ws://\S+)", rf"e.g. \1 in {ENGINE} → Server"),
    (r"(?:in|and the port in) --server", f"in {ENGINE} → Server"),
)
_SOURCE_RULES = (  # the source is chosen in the main window's list, not in Settings
    (r"\(--source mic\)", "(the microphone in the Source list)"),
    (r"pass its name as --source", "choose it in the Source list"),
    (r"use --source \S+", "choose one in the Source list"),
)


def _flag_rules() -> tuple:
    """Each engine setting's flag, with or without its value, as its place in Settings; but
    the model folder's and the server's, which are also what a person types elsewhere
    (``voxcap serve --model FOLDER`` on the GPU computer): the phrases above say those."""
    rules = []
    for name, spec in SPECS.items():
        if name in ("model_dir", "server_url"):
            continue
        if name == "kind":
            rules += [(rf"{re.escape(spec.flag)} {v}(?![\w-])", where_in_settings(name, v))
                      for v in spec.values]
            continue
        value = ("|".join(map(re.escape, map(str, spec.values))) if spec.choices
                 else r"[\d.]+" if spec.low is not None else r"\S+" if spec.metavar else "")
        value += f"|{spec.metavar}" if spec.metavar else ""
        given = rf"(?: (?:{value})(?![\w-]))?" if value else ""  # a switch takes none
        rules.append((rf"{re.escape(spec.flag)}(?![\w-]){given}", where_in_settings(name)))
    return tuple(rules)


_COMPILED = tuple((re.compile(p), w) for p, w in _RULES + _flag_rules() + _SOURCE_RULES)
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]+")  # a command-line flag in a text


def error_for_the_app(exc) -> tuple[str, str]:
    """(message, fix) of a core error in the app's words; a ``ConfigError`` that names its
    setting says where Settings shows it."""
    message, fix = for_the_app(exc.message), for_the_app(exc.fix)
    name = getattr(exc, "setting", "")
    if name in SPECS and where_in_settings(name) not in f"{message} {fix}":
        fix = f"{fix} ({where_in_settings(name)})" if fix else where_in_settings(name)
    return message, fix


def for_the_app(text: str) -> str:
    for pattern, words in _COMPILED:
        text = pattern.sub(words, text)
    return text
