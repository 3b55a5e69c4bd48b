"""What a setting is, declared once beside its field where it is used (the engine's on
``InProcessSettings``/``RemoteSettings``, the app's on ``AppSettings``): the values it may take,
its label in Settings, its command-line flag, whether a change restarts the engine, and how a
wrong value reads. Validation, the engine key, the words a restart is explained with, the
command-line flags, the Settings dialog's widgets and the overrides of one run all derive from it.

    font_size: int = setting(28, label="Si&ze", low=6, high=200)   # in a settings dataclass
    graph_mode: str = same_setting(InProcessSettings, "graph_mode")  # a group gathering it
    spec_of(OverlaySettings, "font_size").high                     # 200
    spec.validate(value)                      # the value, or ValueError("6 to 200")
    add_setting_flags(parser, AppSettings, ["graph_mode", "precision"])  # groups searched too
    flag_values(args, AppSettings)            # {"engine.graph_mode": "NONE"}: the flags given
    settings_like(InProcessSettings, choice, max_streams=2)  # the same-named fields copied

No Qt here (the ground floor: the engine uses it too); the dialog reads the same declarations
to build its widgets.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import ConfigError


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
    # a saved value it refuses is replaced by nearest(value), said so (None: by the default)
    nearest: Callable[[Any], Any] | None = None
    restarts_engine: bool = False
    flag: str = ""  # on the command line, e.g. "--graph-mode"
    flag_help: str = ""
    metavar: str | None = None
    flag_const: Any = None  # the value of the flag given alone (its value optional: --share)
    flag_fix: str = ""  # the fix said for a value the flag does not take (default: what it must be)

    @property
    def values(self) -> tuple:
        return tuple(v for v, _text in self.choices)

    @property
    def name_in_messages(self) -> str:
        return self.words or self.label.replace("&", "").rstrip(":").lower()

    def must_be(self) -> str:
        """What a valid value is, in the words of the note a wrong one gets."""
        return self.allowed() + (", or null for automatic" if self.automatic else "")

    def allowed(self) -> str:
        """The values it takes, in words ("128 to 131072"; None aside)."""
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


def same_setting(cls, name: str) -> Any:
    """A field declared as field ``name`` of ``cls`` is (the same default and ``Spec``): for a
    group that gathers settings declared where they are used (``EngineChoice``)."""
    f = next(f for f in dataclasses.fields(cls) if f.name == name)
    return dataclasses.field(default=f.default, metadata=f.metadata)


def settings_like(cls, source, **more):
    """A ``cls`` from ``source``'s fields that ``cls`` declares under the same name, and
    ``more`` (the fields that are not settings, e.g. ``max_streams``, or one set otherwise)."""
    same = {name: getattr(source, name) for name in specs(cls) if hasattr(source, name)}
    return cls(**{**same, **more})


def check_declared(obj) -> None:
    """ConfigError naming the first declared field of ``obj`` whose value its ``Spec`` refuses
    (``ConfigError.setting``: the field's name)."""
    for name, s in specs(type(obj)).items():
        value = getattr(obj, name)
        try:
            s.validate(value)
        except ValueError as exc:
            words = s.name_in_messages
            unset = ", or leave it unset for automatic" if s.automatic else ""
            raise ConfigError(f"{words[:1].upper()}{words[1:]} {value} is not valid.",
                              f"use {s.allowed()}{unset}" if str(exc) == s.must_be() else
                              f"it must be {exc}", setting=name) from None


def group_type(f: dataclasses.Field):
    """The settings dataclass a field groups (``AppSettings.overlay``), or None."""
    factory = f.default_factory
    return factory if factory is not dataclasses.MISSING and dataclasses.is_dataclass(factory) \
        else None


def declared(cls, prefix: str = "") -> dict[str, tuple[type, str, Spec]]:
    """{path: (class, field, spec)} of every declared setting of ``cls`` and of its groups
    ("engine.graph_mode"), in field order."""
    out: dict[str, tuple[type, str, Spec]] = {}
    for f in dataclasses.fields(cls):
        if (group := group_type(f)) is not None:
            out.update(declared(group, f"{prefix}{f.name}."))
        elif "spec" in f.metadata:
            out[prefix + f.name] = (cls, f.name, f.metadata["spec"])
    return out


def _find(cls, name: str) -> tuple[str, tuple[type, str, Spec]]:
    """The declared setting ``name`` of ``cls`` or of one of its groups: (path, declaration)."""
    for path, found in declared(cls).items():
        if path == name or path.rpartition(".")[2] == name:
            return path, found
    raise KeyError(f"{cls.__name__} has no setting {name!r}")


def spec_named(cls, name: str) -> Spec | None:
    """The declaration of setting ``name`` of ``cls`` or of one of its groups, or None (what a
    front end needs to word a ``ConfigError.setting``)."""
    try:
        return _find(cls, name)[1][2]
    except KeyError:
        return None


def get_path(obj, path: str):
    """The value at ``path`` ("engine.graph_mode") of a settings object."""
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def set_path(obj, path: str, value) -> None:
    """Set the value at ``path`` ("engine.graph_mode") of a settings object."""
    head, _, last = path.rpartition(".")
    setattr(get_path(obj, head) if head else obj, last, value)


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
    path, (owner, field_name, _spec) = _find(cls, name)
    annotation = str(next(f.type for f in dataclasses.fields(owner) if f.name == field_name))
    if annotation == "bool":
        return None
    return int if annotation.startswith("int") else float if annotation.startswith("float") else str


def flag_dest(s: Spec) -> str:
    """The name argparse gives the flag's value (``--graph-mode`` -> ``graph_mode``)."""
    return s.flag.lstrip("-").replace("-", "_")


def add_setting_flags(parser, cls, names, more_help: dict[str, str] | None = None) -> None:
    """The command-line flags of the settings ``names`` of ``cls``, as declared. A flag with a
    value defaults to None and a switch to False (not given), so that ``flag_values`` tells
    what the command line set. ``more_help``: words one command adds to a flag's help. A name
    may be a group's setting ("graph_mode" of ``AppSettings.engine``)."""
    for name in names:
        s = _find(cls, name)[1][2]
        help_text = s.flag_help + (more_help or {}).get(name, "")
        kind = _flag_type(cls, name)
        if kind is None:  # a switch: given means True
            parser.add_argument(s.flag, action="store_true", help=help_text)
            continue
        # no argparse choices: a wrong value gets voxcap's one line and fix (flag_values),
        # not argparse's usage text
        optional = {"nargs": "?", "const": s.flag_const} if s.flag_const is not None else {}
        parser.add_argument(s.flag, type=kind, default=None, metavar=s.metavar, help=help_text,
                            **optional)


def _flag_refused(s: Spec, value, exc: ValueError, name: str) -> ConfigError:
    """A value given with ``s.flag`` that the setting does not take, in one line and a fix."""
    said = str(exc)
    if said == s.must_be():  # out of its range, or not one of its choices
        return ConfigError(f"{s.flag} {value} is not a {s.name_in_messages} voxcap takes.",
                           s.flag_fix or f"give {s.flag} {said}", setting=name)
    # its own rule (``check``) said what is wrong with it
    return ConfigError(f"{s.flag} {str(value)[:60]!r}: {said}.", s.flag_fix or f"give another {s.flag}",
                       setting=name)


def flag_values(args, cls) -> dict[str, Any]:
    """{path: value} of the flags given in ``args`` (those added by ``add_setting_flags``), a
    group's setting by its path ("engine.graph_mode"); ConfigError with the fix for a value the
    setting does not take."""
    out = {}
    for name, (_owner, _field, s) in declared(cls).items():
        value = getattr(args, flag_dest(s), None) if s.flag else None
        if value is not None and value is not False:
            try:
                out[name] = s.validate(value)
            except ValueError as exc:
                raise _flag_refused(s, value, exc, name.rpartition(".")[2]) from None
    return out
