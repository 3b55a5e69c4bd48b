"""A setting, or a piece of advice, named in a core text by a marker that each front end words:
the terminal as its flag (``--max-model-len``), the app as its place in Settings ("Settings →
Engine → Max session length"). The core writes ``f"lower {ref('max_model_len')}"``; a front end
shows ``worded(text, say)``, where ``say(name, value)`` returns its words for one marker.

Names are a setting's field name (its declaration gives flag and label) or an advice name that
both front ends know (``voxcap.app.flag_words``, ``voxcap.gui.settings.setting_words``)::

    text = f"name it with {ref('server_model', 'NAME')}"
    worded(text, lambda name, value: f"--server-model {value}")  # "name it with --server-model NAME"
"""

from __future__ import annotations

import re
from collections.abc import Callable

# rare brackets: a marker never clashes with a text's own characters
MARKER = re.compile(r"⟦([a-z_]+)(?:=([^⟧]*))?⟧")


def ref(name: str, value: object = "") -> str:
    """The marker of setting (or advice) ``name``, given ``value`` when the text names one."""
    return f"⟦{name}={value}⟧" if value != "" else f"⟦{name}⟧"


def worded(text: str, say: Callable[[str, str], str]) -> str:
    """``text`` with each marker replaced by ``say(name, value)`` (value "" when none)."""
    if "⟦" not in text:
        return text
    return MARKER.sub(lambda m: say(m[1], m[2] or ""), text)
