"""Two sound cards of one make (same description, e.g. two identical USB headsets) on a real
PulseAudio server: the source picker lists them apart and each entry captures its own card."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from voxcap.capture.devices import list_devices, server_state
from voxcap.capture.sources import find_device

TWINS = ("twin_a", "twin_b")


def test_twin_sinks_are_listed_apart_and_chosen_by_name(qtbot, pulse):
    from voxcap.gui.main.window import MainWindow

    modules = [pulse.pactl("load-module", "module-null-sink", f"sink_name={name}", "norewinds=1",
                           "sink_properties=device.description=USB-Headset").strip()
               for name in TWINS]
    try:
        devices = [d for d in list_devices() if d.name.startswith("twin_")]
        assert sorted(d.description for d in devices) == ["Monitor of USB-Headset"] * 2
        w = MainWindow()
        qtbot.addWidget(w)
        w.set_devices(list_devices())
        items = {w.source.itemText(i): w.source.itemData(i) for i in range(w.source.count())}
        twins = {text: key for text, key in items.items() if "USB-Headset" in text}
        assert sorted(twins) == ["Monitor of USB-Headset (system audio: twin_a.monitor)",
                                 "Monitor of USB-Headset (system audio: twin_b.monitor)"]
        state = server_state()
        for text, key in twins.items():  # what the choice captures: that very card
            assert find_device(key, state).name == text.rsplit(": ", 1)[1].rstrip(")")
    finally:
        for module in modules:
            pulse.pactl("unload-module", module, check=False)
