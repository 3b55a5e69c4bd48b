"""Errors a person can act on: one line saying what is wrong, one saying how to fix it."""

from __future__ import annotations


class VoxcapError(Exception):
    """Base for errors shown to users as ``message`` plus ``fix`` (never a traceback)."""

    def __init__(self, message: str, fix: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def __str__(self) -> str:
        return f"{self.message}\n  fix: {self.fix}" if self.fix else self.message


class ConfigError(VoxcapError):
    """A setting is invalid. ``setting``: the field it is about (e.g. "max_model_len"), when
    one is: each front end names it in its own words (the terminal by its flag, the app by
    its row in Settings: ``settings_schema.spec_named``)."""

    def __init__(self, message: str, fix: str = "", setting: str = "") -> None:
        super().__init__(message, fix)
        self.setting = setting


class ModelDirError(VoxcapError):
    """The model directory is missing, incomplete or corrupt."""


class AudioFileError(VoxcapError):
    """An audio file cannot be read."""


class EngineError(VoxcapError):
    """The engine failed to start or died."""


class CaptureError(VoxcapError):
    """Audio capture cannot start: no sound server, unknown device, missing system library."""
