"""A pointer device added to a wlroots compositor's seat by a client of the test (the
wlr-virtual-pointer protocol): the compositor routes its motion and clicks like a mouse's."""

from __future__ import annotations

import time

from pywayland.client import Display
from pywayland.protocol.wayland import WlSeat

from support.wayland_protocols.wlr_virtual_pointer_unstable_v1 import ZwlrVirtualPointerManagerV1

BTN_LEFT, BTN_RIGHT = 0x110, 0x111


class VirtualPointer:
    def __init__(self, display: str, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.d = Display(display)
        self.d.connect()
        found: dict = {}

        def global_(registry, name, interface, version):
            if interface == "zwlr_virtual_pointer_manager_v1":
                found["manager"] = registry.bind(name, ZwlrVirtualPointerManagerV1, 1)
            elif interface == "wl_seat" and "seat" not in found:
                found["seat"] = registry.bind(name, WlSeat, 1)

        registry = self.d.get_registry()
        registry.dispatcher["global"] = global_
        self.d.roundtrip()
        self.pointer = found["manager"].create_virtual_pointer(found["seat"])
        self.d.roundtrip()

    def _now(self) -> int:
        return int(time.monotonic() * 1000) & 0xFFFFFFFF

    def move(self, x: int, y: int) -> None:
        """To (x, y) in the layout (all outputs: ``width`` x ``height``)."""
        self.pointer.motion_absolute(self._now(), x, y, self.width, self.height)
        self.pointer.frame()
        self.d.roundtrip()

    def button(self, button: int, pressed: bool) -> None:
        self.pointer.button(self._now(), button, 1 if pressed else 0)
        self.pointer.frame()
        self.d.roundtrip()

    def drag(self, start: tuple[int, int], end: tuple[int, int], steps: int = 10) -> None:
        self.move(*start)
        time.sleep(0.1)
        self.button(BTN_LEFT, True)
        for i in range(1, steps + 1):
            time.sleep(0.03)
            self.move(start[0] + (end[0] - start[0]) * i // steps,
                      start[1] + (end[1] - start[1]) * i // steps)
        self.button(BTN_LEFT, False)

    def click(self, x: int, y: int, button: int = BTN_LEFT) -> None:
        self.move(x, y)
        time.sleep(0.1)
        self.button(button, True)
        self.button(button, False)

    def close(self) -> None:
        self.pointer.destroy()
        self.d.roundtrip()
        self.d.disconnect()
