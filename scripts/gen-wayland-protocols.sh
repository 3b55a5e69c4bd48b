#!/usr/bin/env bash
# Regenerate voxcap/gui/overlay/wayland_protocols/wlr_layer_shell_unstable_v1.py (and the tests' virtual pointer)
# from the XML beside it with
# pywayland's scanner (needs libwayland-dev and wayland-protocols for the core and xdg-shell XML).
# The generated module imports the core interfaces from pywayland's own copies, so that its
# wl_surface/wl_output are the objects pywayland's client uses.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
.venv/bin/python -m pywayland.scanner -o "$out" -i /usr/share/wayland/wayland.xml \
  /usr/share/wayland-protocols/stable/xdg-shell/xdg-shell.xml \
  voxcap/gui/overlay/wayland_protocols/wlr-layer-shell-unstable-v1.xml
sed -e 's/^from \.wayland import/from pywayland.protocol.wayland import/' \
    -e 's/^from \.xdg_shell import/from pywayland.protocol.xdg_shell import/' \
    "$out/wlr_layer_shell_unstable_v1.py" > voxcap/gui/overlay/wayland_protocols/wlr_layer_shell_unstable_v1.py
# The tests' virtual pointer (tests/support/virtual_pointer.py).
.venv/bin/python -m pywayland.scanner -o "$out" -i /usr/share/wayland/wayland.xml \
  tests/support/wayland_protocols/wlr-virtual-pointer-unstable-v1.xml
sed -e 's/^from \.wayland import/from pywayland.protocol.wayland import/' \
    "$out/wlr_virtual_pointer_unstable_v1.py" > tests/support/wayland_protocols/wlr_virtual_pointer_unstable_v1.py
