"""Settings that announce their changes: what changed is worked out once, by name, and each part
of the app is told about the settings it uses (napari's evented settings, qutebrowser's
``@config.change_filter``), instead of each comparing old and new settings by hand.

    changes = SettingsChanges()
    changes.subscribe(restyle, "overlay")                       # any overlay.* setting
    changes.subscribe(refit, "overlay.lines", "overlay.font_size")
    changes.subscribe(restart, restarting_engine=True)          # a setting that restarts it
    changes.subscribe(retry)                      # every application, even of unchanged settings
    changes.announce(old, new)     # each subscriber whose settings differ: called with the change

Names are dotted paths of the settings dataclasses ("overlay.font_size"); a group's name stands
for every setting in it. Whether a setting restarts the engine is its declaration's
(``Spec.restarts_engine``), wherever the setting is nested. Subscribers are called in the order
they subscribed, on the announcing thread; one that fails is logged and the others still run
(the event hub's rule). No Qt here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..eventhub import EventHub
from ..settings_schema import Spec


def changed_names(old, new, prefix: str = "") -> tuple[str, ...]:
    """The dotted names of the settings that differ between ``old`` and ``new`` (dataclasses of
    one type), in field order; nested groups are compared setting by setting."""
    out: list[str] = []
    for f in dataclasses.fields(old):
        a, b = getattr(old, f.name), getattr(new, f.name)
        if dataclasses.is_dataclass(a) and type(a) is type(b):
            out += changed_names(a, b, f"{prefix}{f.name}.")
        elif a != b:
            out.append(prefix + f.name)
    return tuple(out)


def value_at(settings, name: str):
    """The value of the dotted setting ``name``."""
    for part in name.split("."):
        settings = getattr(settings, part)
    return settings


def set_value_at(settings, name: str, value) -> None:
    *groups, leaf = name.split(".")
    for part in groups:
        settings = getattr(settings, part)
    setattr(settings, leaf, value)


def spec_at(settings, name: str) -> Spec:
    """The declaration of the dotted setting ``name`` (an empty Spec where none is declared)."""
    *groups, leaf = name.split(".")
    for part in groups:
        settings = getattr(settings, part)
    f = next(f for f in dataclasses.fields(settings) if f.name == leaf)
    return f.metadata.get("spec", Spec())


def _covers(wanted: str, name: str) -> bool:
    return name == wanted or name.startswith(wanted + ".")


@dataclass(frozen=True)
class SettingsChange:
    """One application of settings: the settings before and after, and what differs."""

    old: Any
    new: Any
    names: tuple[str, ...]  # dotted, in field order

    def touches(self, *wanted: str) -> bool:
        """Whether any of the settings (or groups) ``wanted`` changed."""
        return any(_covers(w, n) for w in wanted for n in self.names)

    @property
    def restarting_engine(self) -> tuple[str, ...]:
        """The changed settings whose declaration says that a change restarts the engine."""
        return tuple(n for n in self.names if spec_at(self.new, n).restarts_engine)


class SettingsChanges:
    """Where the app announces applied settings and its parts subscribe to what they use."""

    def __init__(self) -> None:
        self._hub = EventHub()

    def subscribe(self, callback: Callable[[SettingsChange], None], *names: str,
                  restarting_engine: bool = False) -> None:
        """Call ``callback(change)`` when one of ``names`` (settings or groups) changed, or,
        with ``restarting_engine``, a setting that restarts the engine; with neither, at every
        application of settings (Apply pressed again, nothing changed, included)."""
        every = not names and not restarting_engine

        def deliver(change: object) -> None:  # the hub carries SettingsChange alone
            if not isinstance(change, SettingsChange):
                return
            if every or change.touches(*names) or (restarting_engine and change.restarting_engine):
                callback(change)
        self._hub.subscribe(deliver)

    def announce(self, old, new) -> SettingsChange:
        """Work out what changed from ``old`` to ``new`` and tell the subscribers concerned."""
        change = SettingsChange(old, new, changed_names(old, new))
        self._hub.publish(change)
        return change
