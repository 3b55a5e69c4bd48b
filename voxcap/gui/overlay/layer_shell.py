"""The caption overlay as a wlr-layer-shell surface (sway, Hyprland, river, labwc, KDE Plasma).

Qt has no layer-shell of its own, and KDE's LayerShellQt cannot be loaded into PySide6's Qt
(Debian 12 ships it for Qt 5 only; a Qt 6 build must match the exact private Qt version of the
wheel). So the overlay widget keeps doing all its work (text, layout, painting) but is never
shown as a window of its own (``WA_DontShowOnScreen``); this module renders it into shared-memory
buffers on a surface of the compositor's *overlay* layer, over its own Wayland connection
(pywayland, dispatched from Qt's event loop through a QSocketNotifier).

Placement: the surface is anchored to the top-left of the output the overlay's geometry is on,
with margins = its offset there, so the saved geometry (global, logical pixels, as Qt reports
screens) means the same on every start. Dragging with the left button moves it, near an edge
resizes it; the widget's geometry follows, so the app saves it as on X11. Click-through: an
empty input region. Right button: ``menuRequested`` (the app shows its window: a layer surface
cannot open Qt's menus). When its output goes away the compositor closes the surface; it is made
again on the output Qt then puts the overlay on, and again on its own output when that returns.
"""

from __future__ import annotations

import logging
import mmap
import os
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, QSocketNotifier, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtWidgets import QWidget
from pywayland.client import Display
from pywayland.protocol.relative_pointer_unstable_v1 import ZwpRelativePointerManagerV1
from pywayland.protocol.wayland import WlCompositor, WlOutput, WlSeat, WlShm
from pywayland.protocol.xdg_output_unstable_v1 import ZxdgOutputManagerV1

from .wayland_protocols.wlr_layer_shell_unstable_v1 import ZwlrLayerShellV1

log = logging.getLogger(__name__)

NAMESPACE = "voxcap-captions"
LAYER_OVERLAY = 3
ANCHOR_TOP, ANCHOR_LEFT = 1, 4
SHM_ARGB8888 = 0  # QImage.Format_ARGB32_Premultiplied on a little-endian machine
BTN_LEFT, BTN_RIGHT = 0x110, 0x111
EDGE = 10
MAX_BUFFERS = 3
MIN_W, MIN_H = 200, 40


class _Output:
    def __init__(self, proxy) -> None:
        self.proxy = proxy
        self.name = ""
        self.pos = (0, 0)
        self.size = (0, 0)
        self.scale = 1  # wl_output's integer scale: buffers at this scale stay sharp
        self.xdg = None


class _Buffer:
    """One wl_buffer in its own memfd; busy from attach until the compositor releases it."""

    def __init__(self, shm, width: int, height: int) -> None:
        self.width, self.height, self.stride = width, height, width * 4
        size = self.stride * height
        fd = os.memfd_create("voxcap-overlay", os.MFD_CLOEXEC)
        try:
            os.ftruncate(fd, size)
            self.map = mmap.mmap(fd, size)
            pool = shm.create_pool(fd, size)
            self.buffer = pool.create_buffer(0, width, height, self.stride, SHM_ARGB8888)
            pool.destroy()
        finally:
            os.close(fd)
        self.busy = False
        self.on_release: Callable[[], None] | None = None
        self.buffer.dispatcher["release"] = self._released

    def _released(self, _proxy) -> None:
        self.busy = False
        if self.on_release is not None:
            self.on_release()

    def destroy(self) -> None:
        self.buffer.destroy()
        self.map.close()


class LayerShellOverlay(QObject):
    """Shows ``overlay`` (a QWidget) as an overlay-layer surface. ``available`` is False when the
    compositor cannot be reached or lacks layer-shell; then nothing is changed."""

    menuRequested = Signal()
    mapped = Signal()
    outputsChanged = Signal()  # an output came or went: the app places the overlay again

    def __init__(self, overlay: QWidget, display: str | None = None) -> None:
        super().__init__(overlay)
        self.overlay = overlay
        self.available = False
        # pywayland's proxies (their requests are made at run time: Any to mypy)
        self.layer_surface: Any = None
        self.configured = False
        self.output_name = ""
        self._outputs: dict[int, _Output] = {}
        self._globals: dict[str, Any] = {}
        self._buffers: list[_Buffer] = []
        self._dirty = False
        self._pointer: Any = None
        self._pointer_at = (0.0, 0.0)
        self._drag: tuple[str, float, float, QRect] | None = None  # edges, press at, geometry
        self._rendering = False
        self._origin = (0, 0)  # the surface's top-left in the layout, as the compositor has it
        self._committing = (0, 0)
        self._syncs: set = set()
        self._relative: Any = None  # zwp_relative_pointer_v1, made at the first press
        self._moved = (0.0, 0.0)
        self._flush_timer = QTimer(self, singleShot=True, interval=0)
        self._flush_timer.timeout.connect(self._render)
        self.frames = 0
        self.buffer_scale = 1
        try:
            self.display = Display(display)
            self.display.connect()
        except Exception:  # ValueError/RuntimeError: no compositor there
            log.warning("layer-shell: cannot connect to the Wayland compositor", exc_info=True)
            return
        registry = self.display.get_registry()
        registry.dispatcher["global"] = self._global_added
        registry.dispatcher["global_remove"] = self._global_removed
        self._registry = registry
        self.display.roundtrip()
        self.display.roundtrip()  # the outputs' names and positions
        if "shell" not in self._globals or "shm" not in self._globals:
            log.warning("layer-shell: the compositor does not offer zwlr_layer_shell_v1/wl_shm")
            self.display.disconnect()
            return
        self.available = True
        self._notifier = QSocketNotifier(self.display.get_fd(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._read)
        overlay.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        overlay.installEventFilter(self)
        # Qt schedules repaints of a window through its own (never mapped) Wayland surface's
        # frame callbacks, which never come: after the first, update() paints nothing. So the
        # overlay's own update() calls (new text, settings, hints) also ask us for a frame.
        qt_update = overlay.update

        def update(*args) -> None:
            qt_update(*args)
            self._dirty = True
            self._flush_timer.start()

        setattr(overlay, "update", update)  # noqa: B010 (to mypy a method cannot be assigned)

    # --------------------------------------------------------------- Wayland plumbing ----
    def _global_added(self, registry, name: int, interface: str, version: int) -> None:
        if interface == "wl_compositor":
            self._globals["compositor"] = registry.bind(name, WlCompositor, min(version, 4))
        elif interface == "wl_shm":
            self._globals["shm"] = registry.bind(name, WlShm, 1)
        elif interface == "zwlr_layer_shell_v1":
            self._globals["shell"] = registry.bind(name, ZwlrLayerShellV1, min(version, 3))
        elif interface == "zxdg_output_manager_v1":
            self._globals["xdg_output"] = registry.bind(name, ZxdgOutputManagerV1, min(version, 3))
            for out in self._outputs.values():
                self._describe(out)
        elif interface == "zwp_relative_pointer_manager_v1":
            self._globals["relative"] = registry.bind(name, ZwpRelativePointerManagerV1, 1)
        elif interface == "wl_seat" and "seat" not in self._globals:
            seat = registry.bind(name, WlSeat, min(version, 5))
            seat.dispatcher["capabilities"] = self._seat_capabilities
            self._globals["seat"] = seat
        elif interface == "wl_output":
            out = _Output(registry.bind(name, WlOutput, min(version, 3)))
            self._outputs[name] = out

            def scaled(_p, factor: int, out=out) -> None:
                out.scale = max(1, factor)
                if out.name == self.output_name:
                    self._dirty = True
                    self._flush_timer.start()

            out.proxy.dispatcher["scale"] = scaled
            if "xdg_output" in self._globals:
                self._describe(out)

    def _describe(self, out: _Output) -> None:
        xo = self._globals["xdg_output"].get_xdg_output(out.proxy)

        def named(_p, name: str) -> None:
            out.name = name
            self._output_changed()

        def at(_p, x: int, y: int) -> None:
            out.pos = (x, y)

        def size(_p, w: int, h: int) -> None:
            out.size = (w, h)

        xo.dispatcher["name"] = named
        xo.dispatcher["logical_position"] = at
        xo.dispatcher["logical_size"] = size
        out.xdg = xo  # held: a proxy nobody holds is collected with its handlers

    def _global_removed(self, _registry, name: int) -> None:
        out = self._outputs.pop(name, None)
        if out is not None:
            log.info("layer-shell: output %s removed", out.name)
            self._output_changed()

    def _output_changed(self) -> None:
        """An output came or went: the app places the overlay again from its saved place (asked
        twice: Qt learns of outputs over its own connection, maybe after us)."""
        for delay in (300, 1500):
            QTimer.singleShot(delay, self._outputs_settled)

    def _outputs_settled(self) -> None:
        self.outputsChanged.emit()
        target = self._target_output()  # the place may be the same, its output not
        if self.layer_surface is not None and target is not None and target.name != self.output_name:
            self._remap()

    def _read(self) -> None:
        try:
            self.display.read()
            self.display.dispatch(block=False)
            self.display.flush()
        except RuntimeError:
            log.warning("layer-shell: the Wayland connection failed; the overlay is gone",
                        exc_info=True)
            self._notifier.setEnabled(False)
            self.available = False

    def _flush(self) -> None:
        self.display.flush()

    # ------------------------------------------------------------------ the surface ----
    def _target_output(self) -> _Output | None:
        """The output the overlay's geometry lies on (by Qt's screen of the same name)."""
        screen = QGuiApplication.screenAt(self.overlay.geometry().center())
        if screen is None:
            screen = self.overlay.screen() or QGuiApplication.primaryScreen()
        named = {o.name: o for o in self._outputs.values() if o.name}
        if screen is not None and screen.name() in named:
            return named[screen.name()]
        return next(iter(named.values()), None)

    def map(self) -> None:
        if not self.available or self.layer_surface is not None:
            return
        out = self._target_output()
        comp, shell = self._globals["compositor"], self._globals["shell"]
        self.surface = comp.create_surface()
        self.output_name = out.name if out else ""
        self._follow_screen()
        ls = shell.get_layer_surface(self.surface, out.proxy if out else None, LAYER_OVERLAY,
                                     NAMESPACE)
        ls.dispatcher["configure"] = self._configured
        ls.dispatcher["closed"] = self._closed
        self.layer_surface = ls
        self.configured = False
        ls.set_anchor(ANCHOR_TOP | ANCHOR_LEFT)
        ls.set_exclusive_zone(-1)  # ignore panels' zones: the user's place is the place
        ls.set_keyboard_interactivity(0)
        self._apply_geometry()
        self._apply_input_region()
        self._commit()
        log.info("layer-shell: overlay mapped on output %s", self.output_name or "(any)")

    def _follow_screen(self) -> None:
        """The widget's screen is where its surface is (the app saves it with the geometry)."""
        screen = next((s for s in QGuiApplication.screens() if s.name() == self.output_name), None)
        if screen is not None and self.overlay.screen() is not screen:
            self.overlay.setScreen(screen)

    def unmap(self) -> None:
        if self.layer_surface is None:
            return
        self.layer_surface.destroy()
        self.surface.destroy()
        self.layer_surface = None
        self.configured = False
        self._flush()

    def _remap(self) -> None:
        if self.layer_surface is not None:
            self.unmap()
            self.map()

    def _apply_geometry(self) -> None:
        """Size and margins from the widget's geometry, kept inside the output: on a stand-in
        output (its own is gone) the overlay shows where it fits, its saved place unchanged."""
        g = self.overlay.geometry()
        out = next((o for o in self._outputs.values() if o.name == self.output_name), None)
        ox, oy = out.pos if out else (0, 0)
        left, top = g.x() - ox, g.y() - oy
        if out is not None and out.size[0] > 0:
            ow, oh = out.size
            left = min(max(left, 0), max(0, ow - g.width()))
            top = min(max(top, 0), max(0, oh - g.height()))
        self.layer_surface.set_size(g.width(), g.height())
        self.layer_surface.set_margin(top, 0, 0, left)
        self._committing = (ox + left, oy + top)

    def _commit(self) -> None:
        """Commit, then learn when the compositor has the new place: pointer positions it sends
        after that are relative to it (a drag must not count a move twice)."""
        self.surface.commit()
        origin = self._committing
        cb = self.display.sync()

        def done(_cb, _data) -> None:
            self._origin = origin
            self._syncs.discard(cb)

        cb.dispatcher["done"] = done
        self._syncs.add(cb)  # a proxy nobody holds is collected with its handler
        self._flush()

    def _apply_input_region(self) -> None:
        if getattr(self.overlay, "click_through", False):
            region = self._globals["compositor"].create_region()  # empty: clicks pass through
            self.surface.set_input_region(region)
            region.destroy()
        else:
            self.surface.set_input_region(None)

    def _configured(self, ls, serial: int, width: int, height: int) -> None:
        ls.ack_configure(serial)
        self.configured = True
        self._dirty = True
        self._render()

    def _closed(self, _ls) -> None:
        """The compositor took the surface away (its output is gone): made again once the app
        has placed the overlay on an output that is there."""
        log.info("layer-shell: the compositor closed the overlay (output %s gone?)", self.output_name)
        self.unmap()
        if self.overlay.isVisible():
            self.outputsChanged.emit()
            QTimer.singleShot(0, self.map)

    # ------------------------------------------------------------------- rendering ----
    def _render(self) -> None:
        """Draw the widget into a free buffer and commit it. No frame callbacks: captions change
        a few times a second, updates in one event-loop pass are already one render (the
        zero-time timer), and a compositor that holds back frame callbacks (an output that
        is not repainting) must not hold back the captions."""
        if self.layer_surface is None or not self.configured:
            return
        out = next((o for o in self._outputs.values() if o.name == self.output_name), None)
        scale = out.scale if out else 1
        w, h = self.overlay.width() * scale, self.overlay.height() * scale
        buf = next((b for b in self._buffers if not b.busy and (b.width, b.height) == (w, h)), None)
        if buf is None:
            for b in [b for b in self._buffers if not b.busy]:
                b.destroy()
                self._buffers.remove(b)
            if len(self._buffers) >= MAX_BUFFERS:  # all held by the compositor: on release
                self._dirty = True
                return
            buf = _Buffer(self._globals["shm"], w, h)
            buf.on_release = self._buffer_released
            self._buffers.append(buf)
        self._dirty = False
        # PySide6's stubs name bytes, bytearray and memoryview; any writable buffer works (an mmap)
        img = QImage(buf.map, w, h, buf.stride,  # type: ignore[call-overload]
                     QImage.Format.Format_ARGB32_Premultiplied)
        img.setDevicePixelRatio(scale)
        img.fill(0)
        p = QPainter(img)
        self._rendering = True  # the Paint event render() sends is ours: no new frame for it
        try:
            self.overlay.render(p, QPoint(), self.overlay.rect(), QWidget.RenderFlag.DrawChildren)
        finally:
            self._rendering = False
            p.end()
        del img
        buf.busy = True
        self.buffer_scale = scale
        self.surface.set_buffer_scale(scale)
        self.surface.attach(buf.buffer, 0, 0)
        self.surface.damage_buffer(0, 0, w, h)
        self.surface.commit()
        self._flush()
        self.frames += 1
        if self.frames == 1:
            self.mapped.emit()

    def _buffer_released(self) -> None:
        if self._dirty:
            self._flush_timer.start()

    # ------------------------------------------------------------- widget -> surface ----
    def eventFilter(self, obj, event) -> bool:
        t = event.type()
        if t == QEvent.Type.Show:
            self.map()
        elif t == QEvent.Type.Hide:
            self.unmap()
        elif t == QEvent.Type.Paint and not self._rendering:
            self._dirty = True
            self._flush_timer.start()  # after the paint event, from the event loop
        elif t in (QEvent.Type.Move, QEvent.Type.Resize):
            if self.layer_surface is not None:
                target = self._target_output()
                if target is not None and target.name != self.output_name:
                    self.output_name = target.name  # now: the app may save the screen at once
                    self._follow_screen()
                    QTimer.singleShot(0, self._remap)
                else:
                    self._apply_geometry()
                    self._commit()
                self._dirty = True
                self._flush_timer.start()
            # Not passed on: the widget would save any move as the user's. Here only a drag
            # (saved on release) or the keyboard is the user; Qt moving the never-shown
            # window when a monitor goes away, or the app re-placing it, is not.
            return True
        elif t == QEvent.Type.WindowStateChange or t == QEvent.Type.UpdateRequest:
            self._flush_timer.start()
        return False

    def set_click_through(self, _on: bool) -> None:
        if self.layer_surface is not None:
            self._apply_input_region()
            self.surface.commit()
            self._flush()

    # ---------------------------------------------------------------------- pointer ----
    def _seat_capabilities(self, seat, caps: int) -> None:
        if caps & WlSeat.capability.pointer and self._pointer is None:
            self._pointer = seat.get_pointer()
            self._pointer.dispatcher["motion"] = self._motion
            self._pointer.dispatcher["enter"] = self._enter
            self._pointer.dispatcher["button"] = self._button

    def _enter(self, _p, _serial, surface, x: float, y: float) -> None:
        self._pointer_at = (x, y)

    def _motion(self, _p, _time, x: float, y: float) -> None:
        """Drag without relative pointer events: the pointer in layout coordinates (the
        surface's place as the compositor has it + the position on it) against the press."""
        self._pointer_at = (x, y)
        if self._drag is None or self._relative is not None:
            return
        _edges, gx0, gy0, _geom = self._drag
        self._drag_by(self._origin[0] + x - gx0, self._origin[1] + y - gy0)

    def _relative_motion(self, _p, _hi, _lo, dx: float, dy: float, _dxu, _dyu) -> None:
        """Drag: the pointer's own movement since the press, whatever the surface did meanwhile
        (positions on a surface that is being moved arrive relative to where it was)."""
        if self._drag is not None:
            self._moved = (self._moved[0] + dx, self._moved[1] + dy)
            self._drag_by(*self._moved)

    def _drag_by(self, fdx: float, fdy: float) -> None:
        if self._drag is None:  # (the callers checked)
            return
        edges, _gx0, _gy0, geom = self._drag
        dx, dy = int(fdx), int(fdy)
        g = QRect(geom)
        if not edges:
            g.moveTo(geom.topLeft() + QPoint(dx, dy))
        else:
            if "l" in edges:
                g.setLeft(min(geom.left() + dx, geom.right() - MIN_W))
            if "r" in edges:
                g.setRight(max(geom.right() + dx, geom.left() + MIN_W))
            if "t" in edges:
                g.setTop(min(geom.top() + dy, geom.bottom() - MIN_H))
            if "b" in edges:
                g.setBottom(max(geom.bottom() + dy, geom.top() + MIN_H))
        if g != self.overlay.geometry():
            self.overlay.setGeometry(g)

    def _button(self, _p, _serial, _time, button: int, state: int) -> None:
        if button == BTN_RIGHT and state == 1:
            self.menuRequested.emit()
        if button != BTN_LEFT:
            return
        if state == 1:
            if self._relative is None and "relative" in self._globals:
                self._relative = self._globals["relative"].get_relative_pointer(self._pointer)
                self._relative.dispatcher["relative_motion"] = self._relative_motion
            self._moved = (0.0, 0.0)
            x, y = self._pointer_at
            w, h = self.overlay.width(), self.overlay.height()
            edges = ("l" if x <= EDGE else "") + ("r" if x >= w - EDGE else "") + \
                    ("t" if y <= EDGE else "") + ("b" if y >= h - EDGE else "")
            self._drag = (edges, self._origin[0] + x, self._origin[1] + y,
                          QRect(self.overlay.geometry()))
        elif self._drag is not None:
            self._drag = None
            sig = getattr(self.overlay, "geometryChangedByUser", None)
            if sig is not None:
                sig.emit()

    def close(self) -> None:
        if self.available:
            self.unmap()
            for b in self._buffers:
                b.destroy()
            self._buffers.clear()
            self._notifier.setEnabled(False)
            self.display.disconnect()
            self.available = False
