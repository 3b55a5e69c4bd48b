"""The core's messages, said in the app's words: a fix written for the terminal ("--engine remote
--server ws://HOST:8000") names the setting or the button instead ("Settings → Engine: “A vLLM
server”"). The terminal keeps the flags; every text from the core that the app shows (engine
status, notices, folder checks) goes through ``for_the_app``. Commands that are truly the answer
(``voxcap serve`` on the GPU computer) stay as they are."""

from __future__ import annotations

import re

from ...engine.choice import EngineChoice
from ...settings_schema import specs

SPECS = specs(EngineChoice)
ENGINE = "Settings → Engine"
SERVER = f"{ENGINE}: “A vLLM server”, and its address in Server"
_RULES = (  # (pattern, words); the first ones are whole phrasings, then single flags
    (r"\(--engine remote --server ws://HOST:8000\)", f"({SERVER})"),
    (r"here the app's \"Use a vLLM server\", or --engine remote --server ws://HOST:8000",
     f"here {SERVER}"),
    (r", or use --api-key-file PATH or --api-key-env VAR", ""),
    (r"with `voxcap download` \(about 9 GB; --dir DIR picks the folder\)",
     "(about 9 GB) with “Download the model” in the welcome dialog (Start captioning opens it "
     "while no model is set)"),
    (r"unless --dummy-weights is given", f"unless “Random weights” is ticked in {ENGINE}"),
    (r"and use --dummy-weights for a self-check",
     f"and tick “Random weights” in {ENGINE} for a self-check"),
    (r", or Settings → Engine → Precision: FP8 weights, or --precision fp8\)", ")"),
    (r"(Settings → Engine → Precision: FP8 weights), or --precision fp8", r"\1"),
    (r"start with --verbose for vLLM's log|run again with --verbose and report it",
     "use Help → Copy diagnostics for the log's end and report it"),
    (r"e\.g\. --server (ws://\S+)", rf"e.g. \1 in {ENGINE} → Server"),
    (r"(?:in|and the port in) --server", f"in {ENGINE} → Server"),
    (r"--engine remote", f"{ENGINE}: “A vLLM server”"),
    (r"--dummy-weights", f"“Random weights” in {ENGINE}"),
)
_SOURCE_RULES = (
    (r"\(--source mic\)", "(the microphone in the Source list)"),
    (r"pass its name as --source", "choose it in the Source list"),
    (r"use --source \S+", "choose one in the Source list"),
)


def _row_rules() -> tuple:
    """An engine setting's flag, with or without its value, as its row in Settings → Engine
    (its label there, without the mnemonic and the words in brackets)."""
    rules = []
    for name in ("server_model", "precision", "max_model_len", "kv_cache_gib", "graph_mode"):
        spec = SPECS[name]
        value = ("|".join(map(re.escape, spec.values)) if spec.choices
                 else r"[\d.]+" if spec.low is not None else r"\S+") + f"|{spec.metavar}"
        row = re.sub(r" \(.*\)", "", spec.label.replace("&", ""))
        rules.append((rf"{re.escape(spec.flag)}(?: (?:{value})(?![\w-]))?", f"{ENGINE} → {row}"))
    return tuple(rules)


_COMPILED = tuple((re.compile(p), w) for p, w in _RULES + _row_rules() + _SOURCE_RULES)
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]+")  # a command-line flag in a text


def for_the_app(text: str) -> str:
    for pattern, words in _COMPILED:
        text = pattern.sub(words, text)
    return text
