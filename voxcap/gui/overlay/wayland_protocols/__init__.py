"""Python bindings of Wayland protocols that pywayland does not ship (generated: scripts/gen-wayland-protocols.sh)."""
