"""The person's choice of engine: which one (this computer's vLLM or a vLLM server) and its
settings, each declared where the engine uses it (``InProcessSettings``, ``RemoteSettings``)
and gathered here, as vLLM's ``EngineArgs`` gathers its config classes' fields. The app keeps
it as ``AppSettings.engine``; the CLI builds it from its flags; both get the engine's settings
from it the same way (``settings_for``).

    choice = EngineChoice(kind="local", model_dir="/models/voxtral", graph_mode="NONE")
    choice.settings_for(max_streams=2).graph_mode         # validated InProcessSettings
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..settings_schema import same_setting, setting, settings_like
from .remote.settings import RemoteSettings
from .settings import InProcessSettings

KINDS = (("local", "This computer (vLLM here; needs an NVIDIA GPU)"),
         ("remote", "A vLLM server (its realtime endpoint)"))


@dataclass
class EngineChoice:
    # the order of the fields is the engine key's, which names saved start times
    kind: str = setting(
        KINDS[0][0], label="&Engine", restarts_engine=True, choices=KINDS, flag="--engine",
        flag_help="local: vLLM in this process (needs a GPU for real time); "
                  "remote: a vLLM server's realtime endpoint (--server)")
    model_dir: str = same_setting(InProcessSettings, "model_dir")
    dummy_weights: bool = same_setting(InProcessSettings, "dummy_weights")
    server_url: str = same_setting(RemoteSettings, "server_url")
    server_model: str = same_setting(RemoteSettings, "server_model")
    graph_mode: str = same_setting(InProcessSettings, "graph_mode")
    delay_ms: int = same_setting(InProcessSettings, "delay_ms")
    kv_cache_gib: float | None = same_setting(InProcessSettings, "kv_cache_gib")
    max_model_len: int | None = same_setting(InProcessSettings, "max_model_len")
    enforce_eager: bool = same_setting(InProcessSettings, "enforce_eager")
    precision: str = same_setting(InProcessSettings, "precision")

    @property
    def remote(self) -> bool:
        return self.kind == "remote"

    @property
    def engine_class(self) -> type:
        return RemoteSettings if self.remote else InProcessSettings

    def settings_for(self, **more) -> InProcessSettings | RemoteSettings:
        """The engine's validated settings (ConfigError with the fix): the chosen engine's
        declared fields from this choice, and ``more`` (what the front end decides: streams,
        the API key...; a field the other engine has only is left out)."""
        cls = self.engine_class
        own = {f.name for f in dataclasses.fields(cls)}
        either = own | {f.name for f in dataclasses.fields(InProcessSettings)} | {
            f.name for f in dataclasses.fields(RemoteSettings)}
        if unknown := set(more) - either:
            raise TypeError(f"no engine has the settings {sorted(unknown)}")
        return settings_like(cls, self, **{k: v for k, v in more.items() if k in own}).validated()

    def key(self) -> tuple:
        """What decides the engine: a change here needs an engine restart."""
        return dataclasses.astuple(self)
