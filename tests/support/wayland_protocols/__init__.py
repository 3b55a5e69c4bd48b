"""Test-only Wayland protocol bindings (pywayland scanner; see scripts/gen-wayland-protocols.sh)."""
