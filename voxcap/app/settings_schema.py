"""What a setting is, declared once beside its field: the values it may take, its label in
Settings, its command-line flag, whether a change restarts the engine, and how a wrong value
reads. Validation, the engine key, the words a restart is explained with, the command-line
flags, the Settings dialog's widgets and the overrides of one run all derive from it.

    font_size: int = setting(28, label="Si&ze", low=6, high=200)   # in a settings dataclass
    spec_of(OverlaySettings, "font_size").high                     # 200
    spec.validate(value)                      # the value, or ValueError("6 to 200")
    add_setting_flags(parser, AppSettings, ["graph_mode", "precision"])
    flag_values(args, AppSettings)            # {"graph_mode": "NONE"}: the flags given

No Qt here: the dialog reads the same declarations to build its widgets.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError


@dataclass(frozen=True)
class Spec:
    label: str = ""  # in Settings, with its keyboard mnemonic (&)
    words: str = ""  # in messages ("restarting: graph mode NONE"); default: the label's
    choices: tuple[tuple[Any, str], ...] = ()  # (value, what Settings shows), in that order
    low: float | None = None  # the range, both ends included
    high: float | None = None
    step: int | None = None  # the value is a multiple of it
    automatic: str = ""  # None is allowed, and Settings shows it as this
    check: Callable[[Any], Any] | None = None  # any other rule: the value, or ValueError(must be)
    restarts_engine: bool = False
    flag: str = ""  # on the command line, e.g. "--graph-mode"
    flag_help: str = ""
    metavar: str | None = None

    @property
    def values(self) -> tuple:
        return tuple(v for v, _text in self.choices)

    @property
    def name_in_messages(self) -> str:
        return self.words or self.label.replace("&", "").rstrip(":").lower()

    def must_be(self) -> str:
        """What a valid value is, in the words of the note a wrong one gets."""
        return self._must_be() + (", or null for automatic" if self.automatic else "")

    def _must_be(self) -> str:
        if self.choices:
            return f"one of {', '.join(map(str, self.values))}"
        if self.step is not None:
            return f"a multiple of {self.step} from {self.low:g} to {self.high:g}"
        if self.low is not None and self.high is not None:
            return f"{self.low:g} to {self.high:g}"
        return "valid"

    def validate(self, value):
        """``value`` if valid (None always is: the field's type allows it, or the value was
        refused before), else ValueError saying what it must be."""
        if value is None:
            return None
        if self.choices and value not in self.values:
            raise ValueError(self.must_be())
        if self.low is not None and not self.low <= value <= self.high:
            raise ValueError(self.must_be())
        if self.step is not None and value % self.step:
            raise ValueError(self.must_be())
        return self.check(value) if self.check is not None else value


def setting(default, **spec) -> Any:
    """A dataclass field with its ``Spec`` (a list default is copied per instance)."""
    meta = {"spec": Spec(**spec)}
    if isinstance(default, (list, dict)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def spec_of(cls, name: str) -> Spec:
    """The declaration of field ``name`` of the settings dataclass ``cls``."""
    for f in dataclasses.fields(cls):
        if f.name == name:
            return f.metadata.get("spec", Spec())
    raise KeyError(f"{cls.__name__} has no setting {name!r}")


def specs(cls) -> dict[str, Spec]:
    """Every declared setting of ``cls`` (groups of settings left out), in field order."""
    return {f.name: f.metadata["spec"] for f in dataclasses.fields(cls) if "spec" in f.metadata}


def engine_fields(cls) -> tuple[str, ...]:
    """The fields whose change restarts the engine, in field order."""
    return tuple(name for name, s in specs(cls).items() if s.restarts_engine)


def _flag_type(cls, name: str):
    annotation = str(next(f.type for f in dataclasses.fields(cls) if f.name == name))
    if annotation == "bool":
        return None
    return int if annotation.startswith("int") else float if annotation.startswith("float") else str


def flag_dest(s: Spec) -> str:
    """The name argparse gives the flag's value (``--graph-mode`` -> ``graph_mode``)."""
    return s.flag.lstrip("-").replace("-", "_")


def add_setting_flags(parser, cls, names, more_help: dict[str, str] | None = None) -> None:
    """The command-line flags of the settings ``names`` of ``cls``, as declared. A flag with a
    value defaults to None and a switch to False (not given), so that ``flag_values`` tells
    what the command line set. ``more_help``: words one command adds to a flag's help."""
    for name in names:
        s = spec_of(cls, name)
        help_text = s.flag_help + (more_help or {}).get(name, "")
        kind = _flag_type(cls, name)
        if kind is None:  # a switch: given means True
            parser.add_argument(s.flag, action="store_true", help=help_text)
            continue
        # no argparse choices: a wrong value gets voxcap's one line and fix (flag_values),
        # not argparse's usage text
        parser.add_argument(s.flag, type=kind, default=None, metavar=s.metavar, help=help_text)


def flag_values(args, cls) -> dict[str, Any]:
    """{field: value} of the flags given in ``args`` (those added by ``add_setting_flags``);
    ConfigError with the fix for a value the setting does not take."""
    out = {}
    for name, s in specs(cls).items():
        value = getattr(args, flag_dest(s), None) if s.flag else None
        if value is not None and value is not False:
            try:
                out[name] = s.validate(value)
            except ValueError as exc:
                raise ConfigError(f"{s.flag} {value} is not a {s.name_in_messages} voxcap takes.",
                                  f"give {s.flag} {exc}") from None
    return out
