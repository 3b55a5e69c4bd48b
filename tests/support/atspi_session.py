"""The scripted app (support/atspi_app.py) under Xvfb with a compositor, on a private AT-SPI bus,
ready ("Engine ready" announced), for a test that reads and types into it as a person does.

    with atspi_app_ready(tmp_path) as (x, bus, listener, app): ...
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

from support.atspi import AtspiBus
from support.steered_process import SteeredProcess
from support.xvfb import Xvfb

APP = Path(__file__).with_name("atspi_app.py")


@contextmanager
def atspi_app_ready(tmp_path: Path, width: int = 1400, height: int = 900):
    with Xvfb(width, height) as x, AtspiBus() as bus:
        x.start_compositor()
        listener = bus.listen()
        app = SteeredProcess([sys.executable, str(APP)], tmp_path)
        try:
            assert listener.wait_for(lambda ev: ev["type"] == "object:announcement"
                                     and "Engine ready" in ev["data"], 30), listener.events
            yield x, bus, listener, app
        finally:
            app.close()
            listener.stop()
