"""Settings files of earlier versions, read as today's: each change of the file's shape is one
step here, applied in order to the parsed JSON before it is read, so that nothing a person set
is lost when voxcap is updated (the next save writes today's shape).

    data = migrate(json.loads(text))       # then settings.from_dict(data)
"""

from __future__ import annotations

import dataclasses
import logging

from ..engine.choice import EngineChoice

log = logging.getLogger(__name__)


def _engine_group(data: dict) -> dict:
    """Until commit dbd677b the engine's settings were keys of the file itself and "engine" was
    the kind ("local"/"remote"); now they are the group "engine" (``EngineChoice``). A file that
    already has the group is left as it is."""
    if isinstance(data.get("engine"), dict):
        return data
    group = {}
    if "engine" in data:
        group["kind"] = data.pop("engine")
    for name in (f.name for f in dataclasses.fields(EngineChoice)):
        if name != "kind" and name in data:
            group[name] = data.pop(name)
    if group:
        log.info("settings: the engine's %d settings moved into its group", len(group))
        data["engine"] = group
    return data


STEPS = (_engine_group,)


def migrate(data: dict) -> dict:
    """``data`` (a parsed settings file) in today's shape; a copy, the argument is not changed."""
    out = dict(data)
    for step in STEPS:
        out = step(out)
    return out
