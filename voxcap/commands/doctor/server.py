"""The vLLM server (remote engine): reachable, serving the model."""

from __future__ import annotations

import json

from .base import (
    FAIL,
    OK,
    SKIP,
    Check,
    Context,
)


def check_server(ctx: Context, args) -> Check:
    title = "vLLM server"
    if ctx.engine != "remote" and ctx.no_gpu():
        return Check("server", title, SKIP, "none chosen yet: start `voxcap serve` on a computer "
                     "with an NVIDIA GPU and give its address to the app (\"Use a vLLM server\")")
    if ctx.engine != "remote":
        return Check("server", title, SKIP, "not used: the local engine runs the model")
    import urllib.error
    import urllib.request

    from ...app.remote_key import api_key
    from ...engine.remote.settings import display_url, models_url
    from ...errors import VoxcapError

    try:
        url = models_url(ctx.server_url)
        key = api_key(ctx.server_url)  # as the app finds it
    except VoxcapError as exc:
        return Check("server", title, FAIL, exc.message, exc.fix)
    details: dict[str, object] = {"url": display_url(url)}
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"} if key else {})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            data = json.loads(response.read(1 << 20))
    except urllib.error.HTTPError as exc:
        fix = ("set the server's API key in Settings" if exc.code in (401, 403)
               else "check the address; it must be a vLLM server (`vllm serve`)")
        return Check("server", title, FAIL, f"{display_url(url)} answered HTTP {exc.code}", fix,
                     details)
    except (OSError, ValueError) as exc:
        return Check("server", title, FAIL, f"cannot reach {display_url(url)}: {exc}",
                     "check that the server runs and the address is right; a firewall may "
                     "block the port", details)
    models = [str(m.get("id")) for m in (data.get("data") or []) if isinstance(m, dict)]
    details["models"] = models
    return Check("server", title, OK, f"{display_url(url)} serves {', '.join(models) or 'nothing'}",
                 "" if models else "start the server with the Voxtral Realtime model", details)
