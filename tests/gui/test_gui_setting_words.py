"""No command-line flags in what the app tells its user where a setting or a button would do:
the GUI's own strings, every message of the core as the app shows it (``for_the_app``), and a
real engine failure in a running window. The core names a setting by a marker
(``setting_refs``): the app says its label in Settings, the terminal its flag, both as the
declaration gives them."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from support.app_walk import FLAG

from voxcap.app.controller import default_engine_factory
from voxcap.app.settings import AppSettings
from voxcap.commands import fix_in_flags
from voxcap.commands.flag_words import _advice as terminal_advice
from voxcap.commands.flag_words import in_flags
from voxcap.engine.choice import EngineChoice
from voxcap.engine.settings import InProcessSettings
from voxcap.errors import ConfigError
from voxcap.gui.settings.setting_words import ADVICE, SPECS, error_for_the_app, for_the_app
from voxcap.setting_refs import MARKER, ref
from voxcap.settings_schema import spec_named, spec_of

PKG = Path(__file__).resolve().parents[2] / "voxcap"
# where a command is truly the answer, or the text is not an instruction to the app's user
ALLOWED = (
    "voxcap serve --model FOLDER",  # run on the GPU computer: no button here can do it
    "voxcap gui --toggle-",  # what to bind desktop keyboard shortcuts to (no key grab here)
    "voxcap doctor --json",  # the diagnostics' heading in the clipboard text, not on screen
    "--api-key-env",  # errors about a flag the user typed (no such setting in the app)
    "--start-timeout",  # `voxcap serve`'s own server, a terminal command
    "--vllm-args",  # idem
    "--share PORT",  # the sharing port clash of `voxcap gui --share` (the app's own port: Share tab)
    "systemctl --user start", "pulseaudio --start",  # the sound server: the system's commands
    "--source \"app:NAME\"",  # `voxcap devices`' listing, a terminal command
    "--served-model-name",  # a flag of the vLLM server the user started themselves
    "voxcap live --glossary FILE",  # the word list's file is the one the terminal reads too
)
# what prints to the terminal only: the commands, and what only `voxcap serve` says
TERMINAL_ONLY = ("commands", "cli.py", "launcher.py", "engine/server/args.py",
                 "engine/server/gpus.py")


def _texts(path: Path):
    """(line, text) of each string literal of a module that is not a docstring, a log call's
    nor a setting's command-line help or fix (f-strings with their holes as {})."""
    tree = ast.parse(path.read_text())
    skip: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant):
            skip.add(id(body[0].value))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "log":
            skip.update(id(n) for n in ast.walk(node))
        # the terminal's --help, and its fix for a wrong value given with a flag
        if isinstance(node, ast.keyword) and node.arg in ("flag_help", "flag_fix"):
            skip.update(id(n) for n in ast.walk(node.value))
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.JoinedStr):
            skip.update(id(v) for v in node.values)
            yield node.lineno, "".join(v.value if isinstance(v, ast.Constant) else "{}"
                                       for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


def _flagged(text: str) -> list[str]:
    if " " not in text.strip() or text.startswith("--"):  # an argv element, not a sentence
        return []
    for allowed in ALLOWED:
        text = text.replace(allowed, "")
    return FLAG.findall(text)


def _scan(files, translate=lambda t: t) -> list[str]:
    found = []
    for path in files:
        for line, text in _texts(path):
            if flags := _flagged(translate(text)):
                found.append(f"{path.relative_to(PKG)}:{line}: {flags} in {text[:120]!r}")
    return found


def test_the_guis_own_strings_have_no_flags():
    files = sorted((PKG / "gui").rglob("*.py"))
    assert _scan(files) == [], '\n'.join(_scan(files))


def test_the_cores_messages_as_the_app_shows_them_have_no_flags():
    files = [p for p in sorted(PKG.rglob("*.py")) if "gui" not in p.relative_to(PKG).parts
             and not p.relative_to(PKG).as_posix().startswith(TERMINAL_ONLY)]
    assert _scan(files, for_the_app) == [], '\n'.join(_scan(files, for_the_app))


def test_known_fixes_name_the_setting():
    from voxcap.engine.vllm_adapter.platform import NO_GPU_FIX

    text = for_the_app(NO_GPU_FIX)
    assert "Settings → Engine: “A vLLM server”, and its address in Server" in text, text
    assert "voxcap serve" in text and not FLAG.findall(text) and not MARKER.search(text)
    core = f"lower the max session length ({ref('max_model_len')}) to the model's"
    assert for_the_app(core) == \
        "lower the max session length (Settings → Engine → Max session length) to the model's"
    assert in_flags(core) == "lower the max session length (--max-model-len) to the model's"


def test_the_terminal_says_the_flags_as_before():
    """The markers change nothing the terminal prints."""
    from voxcap.engine.model.folder import GET_MODEL
    from voxcap.engine.vllm_adapter.platform import NO_GPU_FIX

    assert "here the app's \"Use a vLLM server\", or --engine remote --server ws://HOST:8000)" \
        in in_flags(NO_GPU_FIX)
    assert in_flags(GET_MODEL).endswith(
        "with `voxcap download` (about 9 GB; --dir DIR picks the folder), or run "
        "`voxcap make-tiny-model DIR` and use --dummy-weights for a self-check")
    assert in_flags(f"e.g. {ref('server_url', 'ws://gpu-box:8000')}") == "e.g. --server ws://gpu-box:8000"
    assert for_the_app(f"e.g. {ref('server_url', 'ws://gpu-box:8000')}") == \
        "e.g. ws://gpu-box:8000 in Settings → Engine → Server"


def test_each_marker_of_the_core_is_known_to_both_front_ends():
    """A name the core writes in ``ref(...)`` is a setting both can word, or advice both know."""
    called = set()
    for path in PKG.rglob("*.py"):
        called |= set(re.findall(r"\bref\(\s*[\"']([a-z_]+)[\"']", path.read_text()))
    assert {"max_model_len", "server_url", "verbose", "get_model"} <= called, called
    for name in called:
        assert name in ADVICE or name in SPECS or name == "source", f"the app has no words for {name!r}"
        spec = spec_named(AppSettings, name)
        assert name in terminal_advice() or name == "use_source" or (spec is not None and spec.flag), \
            f"the terminal has no flag for {name!r}"


@pytest.mark.parametrize(("wrong", "name"), [
    ({"kv_cache_gib": 0.0}, "kv_cache_gib"), ({"max_model_len": 64}, "max_model_len"),
    ({"graph_mode": "FULL"}, "graph_mode"), ({"delay_ms": 500}, "delay_ms")])
def test_a_config_error_names_its_setting_each_front_end_in_its_words(wrong, name):
    """The engine's refusal names the setting; the app says its row in Settings (its label
    there, as declared), the terminal its flag."""
    with pytest.raises(ConfigError) as caught:
        InProcessSettings("/m", **wrong).validated()
    exc, spec = caught.value, spec_of(InProcessSettings, name)
    assert exc.setting == name
    message, fix = error_for_the_app(exc)
    row = spec.label.replace("&", "").split(" (")[0]
    assert f"Settings → Engine → {row}" in f"{message} {fix}" and not FLAG.findall(message + fix)
    assert spec.flag in f"{exc.message} {fix_in_flags(exc)}"


def test_a_real_engine_failure_in_the_window_names_the_setting(qtbot, make_app):
    """The remote engine (real) against a web server that is not vLLM's (nothing listening is
    now waited for, "retrying in N s"): its fix names Settings, not --server-model."""
    import http.server
    import threading

    class NotVllm(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # http.server's name
            self.send_error(404)

        def log_message(self, *args):
            pass

    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotVllm)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    try:
        address = f"127.0.0.1:{web.server_address[1]}"
        app = make_app(AppSettings(engine=EngineChoice(kind="remote", server_url=f"ws://{address}")),
                       engine_factory=default_engine_factory())
        status = app.window.engine_status
        qtbot.waitUntil(lambda: status.fix.text() != "", timeout=60_000)
        shown = f"{status.label.text()} {status.fix.text()}"
    finally:
        web.shutdown()
        web.server_close()
    assert address in shown
    assert "Settings → Engine → Server" in shown and not _flagged(shown), shown
