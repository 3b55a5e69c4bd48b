"""Captions from a vLLM server, as a newcomer on the same computer runs it: ``voxcap serve``
(vLLM's own server, CPU build, the tiny model) and the app pointed at its loopback address with
no key copied anywhere. The app uses the key ``voxcap serve`` made here; the engine status says
where the captions come from; the meter, read over AT-SPI from another process, shows what the
server path has (the server and its model, the round trip, lag, backlog) and nothing it cannot
know (graph mode, precision, GPU memory and load, full-graph share, headroom)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from support.atspi import AtspiBus, pyatspi_available, walk
from support.steered_process import SteeredProcess
from support.xvfb import Xvfb

pytestmark = [
    pytest.mark.engine,
    pytest.mark.slow,
    pytest.mark.skipif(not pyatspi_available(),
                       reason="system python3 without pyatspi: run scripts/setup-dev.sh"),
]
APP = Path(__file__).resolve().parents[1] / "support" / "remote_status_app.py"
SHOTS = os.environ.get("VOXCAP_SHOTS")
SERVER_ONLY = ("Graph mode (vLLM)", "Precision", "Steps as full graphs",
               "Headroom (80 ms budget)", "GPU memory", "GPU load")


def _labels(tree: dict) -> dict[str, dict]:
    """Accessible description (what it is) -> the label's node, for labels that are shown."""
    return {n["description"].split(". ")[0]: n for n in walk(tree)
            if n.get("role") == "label" and n.get("description")
            and "showing" in n.get("states", ())}


def _until(bus, pid, check, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        labels = _labels(bus.dump(pid))
        if check(labels) or time.monotonic() > deadline:
            return labels
        time.sleep(0.5)


def test_the_meter_shows_the_server_path_and_hides_what_it_cannot_know(shared_serve, tmp_path):
    srv = shared_serve  # support/shared_serve.py's
    with Xvfb(1400, 900) as x, AtspiBus() as bus:
        # the same user on the same computer: the config folder `voxcap serve` used
        app = SteeredProcess([sys.executable, str(APP), srv.url], tmp_path,
                             env={"VOXCAP_CONFIG_DIR": str(srv.home / "config")})
        try:
            labels = _until(bus, app.pid, lambda ls: "Captions from" in ls.get(
                "Engine status", {}).get("name", ""), 120)
            status = labels["Engine status"]["name"]
            assert status.startswith(f"Captions from the vLLM server: {srv.served_name} "
                                     f"at {srv.url} (connected in "), status
            assert "Graph mode" not in status and "Engine ready" not in status
            assert labels["Server"]["name"] == f"{srv.served_name} at {srv.url}"
            for field in SERVER_ONLY:
                assert field not in labels, (field, labels[field])
            for field in ("Round trip p50 / p95", "Caption lag p50 / p95", "Backlog",
                          "Tokens/s", "Dropped audio"):
                assert field in labels, (field, sorted(labels))

            app.send("caption")
            labels = _until(bus, app.pid, lambda ls: ls.get(
                "Round trip p50 / p95", {}).get("name", "n/a").split(" ")[0] != "n/a", 240)
            assert labels["Round trip p50 / p95"]["name"].endswith(" ms"), labels
            assert labels["Backlog"]["name"].endswith(" ms")
            if SHOTS:
                x.screenshot(str(Path(SHOTS) / "remote-meter.png"))
        finally:
            app.close()
