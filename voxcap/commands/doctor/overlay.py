"""The caption overlay: what the desktop lets it do."""

from __future__ import annotations

import os

from .base import (
    OK,
    SKIP,
    WARN,
    Check,
    Context,
)


def check_overlay(ctx: Context, args) -> Check:
    """How the caption overlay stays above other windows here, and global shortcuts."""
    from ...app import desktop_environment as ds

    path = ds.detect()
    keys = ds.shortcut_support(path)
    details = {"path": path.path, "reason": path.reason, "desktop": path.desktop,
               "qt_platform": path.qt_platform, "global_shortcuts": keys.how,
               "shortcuts_summary": keys.summary}
    title = "Captions on top"
    if path.path == ds.OFFSCREEN or path.path == ds.WINDOW and not path.desktop and \
            not os.environ.get("WAYLAND_DISPLAY"):
        return Check("overlay", title, SKIP, path.reason, "", details)
    if path.path == ds.WINDOW:
        return Check("overlay", title, WARN, f"no way to keep the overlay on top: {path.reason}",
                     path.advice, details)
    return Check("overlay", title, OK, f"{path.path}: {path.reason}; global shortcuts: "
                 f"{keys.summary}", keys.fix, details)
