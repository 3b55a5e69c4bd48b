"""The core's messages, said in the app's words: a fix written for the terminal ("--engine remote
--server ws://HOST:8000") names the setting or the button instead ("Settings → Engine: “A vLLM
server”"). The terminal keeps the flags; every text from the core that the app shows (engine
status, notices, folder checks) goes through ``for_the_app``. Commands that are truly the answer
(``voxcap serve`` on the GPU computer) stay as they are."""

from __future__ import annotations

import re

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
    (r"--server-model( NAME| \S+)?", f"{ENGINE} → Server model"),
    (r"--precision( \w+)?", f"{ENGINE} → Precision"),
    (r"\(--max-model-len\)", f"({ENGINE} → Max session length)"),
    (r"--max-model-len", f"{ENGINE} → Max session length"),
    (r"--kv-cache-gib( [\d.]+)?", f"{ENGINE} → GPU memory budget"),
    (r"--graph-mode( \w+)?", f"{ENGINE} → Graph mode"),
    (r"--dummy-weights", f"“Random weights” in {ENGINE}"),
    (r"\(--source mic\)", "(the microphone in the Source list)"),
    (r"pass its name as --source", "choose it in the Source list"),
    (r"use --source \S+", "choose one in the Source list"),
)
_COMPILED = tuple((re.compile(p), w) for p, w in _RULES)
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]+")  # a command-line flag in a text


def for_the_app(text: str) -> str:
    for pattern, words in _COMPILED:
        text = pattern.sub(words, text)
    return text
