"""What a screen reader gets: the app (real windows under Xvfb, scripted engine, fake audio) read
over AT-SPI from another process with pyatspi, as Orca reads it, on a private D-Bus session.

Every status a sighted user reads is there with its current text (captioning state, engine
status, the notice and the fix, the meter's values, the overlay's rows), and "ready" and an
engine error are announced (AT-SPI ``object:announcement``; errors assertive)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from support.atspi import AtspiBus, overlay_node, pyatspi_available, until, walk
from support.fake_hub import FakeHub
from support.steered_process import SteeredProcess
from support.xvfb import Xvfb

from voxcap.engine.model.tiny import write_tiny_model

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not pyatspi_available(),
                       reason="system python3 without pyatspi: run scripts/setup-dev.sh"),
]
APP = Path(__file__).resolve().parents[1] / "support" / "atspi_app.py"


class AppProcess(SteeredProcess):
    def __init__(self, tmp_path: Path) -> None:
        super().__init__([sys.executable, str(APP)], tmp_path)


def _labels(tree: dict) -> dict[str, str]:
    """Accessible description (what it is) -> accessible name (its text now), for labels."""
    return {n["description"].split(". ")[0]: n["name"] for n in walk(tree)
            if n.get("role") == "label" and n.get("description")}



def test_screen_reader_reads_every_status_and_hears_ready_and_errors(tmp_path):
    with Xvfb(1400, 900), AtspiBus() as bus:
        listener = bus.listen()
        app = AppProcess(tmp_path)
        try:
            ready = listener.wait_for(lambda ev: ev["type"] == "object:announcement"
                                      and "Engine ready" in ev["data"], 30)
            assert ready is not None, listener.events
            labels = _labels(bus.dump(app.pid))
            assert labels["Captioning state"] == "Not captioning"
            assert labels["Engine status"].startswith("Engine ready on fake")

            app.send("caption")
            tree = until(lambda: bus.dump(app.pid), lambda t: "Captioning" == _labels(t).get(
                "Captioning state") and "hello" in overlay_node(t)["description"])
            labels = _labels(tree)
            assert labels["Captioning state"] == "Captioning"
            assert "hello there" in overlay_node(tree)["description"]  # the rows on screen
            assert overlay_node(tree)["name"] == "Live captions"
            assert any("hello there" in n.get("text", "") for n in walk(tree)
                       if n.get("role") == "text")  # the caption history
            tree = until(lambda: bus.dump(app.pid),
                          lambda t: _labels(t).get("Tokens/s", "n/a") != "n/a")
            labels = _labels(tree)
            for field in ("Graph mode (vLLM)", "Steps as full graphs", "Tokens/s",
                          "Step p50 / p95", "Headroom (80 ms budget)", "Caption lag p50 / p95",
                          "Delta → painted p50 / p95", "Backlog", "Dropped audio", "GPU memory",
                          "GPU load"):
                assert field in labels, (field, labels)
            assert float(labels["Tokens/s"]) > 0
            assert labels["Graph mode (vLLM)"] == "FULL_DECODE_ONLY"
            assert "keeping up" in labels["Headroom (80 ms budget)"]
            app.send("stop")

            app.send("fail")
            error = listener.wait_for(lambda ev: ev["type"] == "object:announcement"
                                      and "Engine error" in ev["data"], 30)
            assert error is not None, listener.events
            assert "the GPU fell off the bus" in error["data"] and "Fix: a fix" in error["data"]
            assert error["detail1"] == 2, error  # assertive: interrupts whatever is spoken
            restarting = listener.wait_for(lambda ev: str(ev.get("name")).startswith("restarting →"), 5)
            assert restarting is not None and restarting["role"] == "label"  # the meter said so
            labels = _labels(bus.dump(app.pid))
            assert labels["Engine status"] == "Engine error: the GPU fell off the bus"
            assert labels["How to fix the engine problem"] == "Fix: a fix"

            app.send("problem")  # captioning refused: a notice, announced
            notice = listener.wait_for(lambda ev: ev["type"] == "object:announcement"
                                       and "Captioning cannot start" in ev["data"], 20)
            assert notice is not None, listener.events
            labels = _labels(bus.dump(app.pid))
            assert labels["Latest notice"].startswith("Captioning cannot start")

            app.send("settings")
            tree = until(lambda: bus.dump(app.pid),
                          lambda t: _labels(t).get("Model folder check", "").startswith("✗"))
            assert _labels(tree)["Model folder check"].startswith(
                "✗ Model directory does not exist: /tmp/fake-model")
            combos = {n["name"]: n.get("labelled_by", []) for n in walk(tree)
                      if n.get("role") == "combo box"}  # a combo's name is its value
            assert combos["This computer (vLLM here; needs an NVIDIA GPU)"][0] == "Engine:"
            assert combos["Both: system audio and microphone"][0] == "Source:"
            assert all(combos.values()), combos  # each one told by its label

            # first run with a model folder that has no weights: the self-check is offered
            model = write_tiny_model(tmp_path / "tiny")
            app.send(f"first-run {model}")
            tree = until(lambda: bus.dump(app.pid), lambda t: "Self-check only" in _labels(t).get(
                "Model folder check", ""))
            assert "consolidated.safetensors" in _labels(tree)["Model folder check"]
            assert any(n.get("role") == "check box" and n["name"].startswith("Self-check only")
                       for n in walk(tree))
            assert any(n.get("role") == "dialog" and n["name"].startswith("Welcome") for n in walk(tree))
            app.send("cancel-first-run")
            tree = until(lambda: bus.dump(app.pid), lambda t: not any(
                n.get("role") == "dialog" and n["name"].startswith("Welcome") for n in walk(t)), 10)
            assert not any(str(n.get("name")).startswith("Welcome") for n in walk(tree))  # gone
        finally:
            app.close()
            listener.stop()



def test_screen_reader_follows_the_engine_preparation_during_the_download(tmp_path):
    """First run on a GPU machine: the preparation that runs while the weights download is
    announced when it starts and ends, and "Use this" is unavailable while it still runs."""
    hub = FakeHub()
    hub.delay = 0.05  # ~1 s for the weights: the preparation is announced before they are in
    with Xvfb(1400, 900), AtspiBus() as bus:
        listener = bus.listen()
        app = AppProcess(tmp_path)
        try:
            app.send(f"first-run-download {hub.url} {tmp_path / 'model'}")
            started = listener.wait_for(lambda ev: ev["type"] == "object:announcement"
                                        and "being prepared" in ev["data"], 30)
            assert started is not None, listener.events
            tree = until(lambda: bus.dump(app.pid), lambda t: _labels(t).get(
                "Download status", "").startswith("✓ Downloaded"))
            labels = _labels(tree)
            assert labels["Download status"].startswith("✓ Downloaded"), labels
            assert labels["Engine preparation"].startswith("Finishing the engine's preparation")
            use = next(n for n in walk(tree) if n.get("role") == "push button"
                       and n["name"] == "Use this")
            assert "enabled" not in use["states"], use  # the GPU is still busy with it

            app.send("prep-done")
            done = listener.wait_for(lambda ev: ev["type"] == "object:announcement"
                                     and "Engine prepared" in ev["data"], 20)
            assert done is not None, listener.events
            tree = until(lambda: bus.dump(app.pid), lambda t: "enabled" in next(
                n for n in walk(t) if n.get("name") == "Use this")["states"])
            assert _labels(tree)["Engine preparation"].startswith("✓ Engine prepared")
            assert "enabled" in next(n for n in walk(tree) if n.get("name") == "Use this")["states"]
        finally:
            app.close()
            listener.stop()
            hub.shutdown()
            hub.server_close()


def test_screen_reader_hears_that_captions_are_shared_and_to_how_many(tmp_path):
    """Sharing switched on while captioning: the main window's "Sharing: N viewers" is read
    and announced over AT-SPI, the count follows the viewers, and the feed says "on"."""
    import json
    import urllib.request

    from support.vllm_server import free_port

    port = free_port()
    with Xvfb(1400, 900), AtspiBus() as bus:
        listener = bus.listen()
        app = AppProcess(tmp_path)
        try:
            assert listener.wait_for(lambda ev: ev["type"] == "object:announcement"
                                     and "Engine ready" in ev["data"], 30) is not None
            app.send("caption")
            until(lambda: bus.dump(app.pid),
                   lambda t: _labels(t).get("Captioning state") == "Captioning")
            assert "Caption sharing" not in _visible_labels(bus.dump(app.pid))
            app.send(f"share {port}")
            said = listener.wait_for(lambda ev: ev["type"] == "object:announcement"
                                     and ev["data"] == "Sharing: 0 viewers", 20)
            assert said is not None, listener.events
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/events", timeout=30) as feed:
                first = next(raw for raw in feed if raw.startswith(b"data: "))
                assert json.loads(first[6:])["state"] == "on"
                tree = until(lambda: bus.dump(app.pid), lambda t: _visible_labels(t).get(
                    "Caption sharing") == "Sharing: 1 viewer")
                assert _visible_labels(tree)["Caption sharing"] == "Sharing: 1 viewer"
        finally:
            app.close()
            listener.stop()


def _visible_labels(tree: dict) -> dict[str, str]:
    return {n["description"].split(". ")[0]: n["name"] for n in walk(tree)
            if n.get("role") == "label" and n.get("description")
            and "showing" in n.get("states", ())}
