"""The model folder: complete, readable weights."""

from __future__ import annotations

from pathlib import Path

from .base import (
    FAIL,
    OK,
    SKIP,
    WARN,
    Check,
    Context,
    _gib,
)


def check_model(ctx: Context, args) -> Check:
    from ...engine.model.folder import GET_MODEL, inspect_model_dir
    from ...engine.model.weights_check import weights_problem
    from ...errors import ModelDirError

    title = "Model"
    if ctx.engine == "remote":
        return Check("model", title, SKIP, "not needed here: the vLLM server has the model")
    if not ctx.model_dir and ctx.no_gpu():
        return Check("model", title, SKIP, "not needed without an NVIDIA GPU: the vLLM server "
                     "has the model")
    if not ctx.model_dir:
        return Check("model", title, FAIL, "no model directory is set",
                     "choose or download the model in the app (first-run dialog or Settings), "
                     f"or give --model DIR; to get it: {GET_MODEL}")
    details: dict[str, object] = {"path": ctx.model_dir, "dummy_weights": ctx.dummy_weights}
    try:
        info = inspect_model_dir(ctx.model_dir, ctx.dummy_weights)
    except ModelDirError as exc:
        return Check("model", title, FAIL, exc.message, exc.fix, details)
    weights = Path(info.path) / "consolidated.safetensors"
    weights_bytes = 0
    if info.has_weights:
        problem = weights_problem(weights)
        weights_bytes = details["weights_bytes"] = weights.stat().st_size
        if problem:
            return Check("model", title, FAIL, f"the weights {weights} are unusable: {problem}",
                         "download the model again (the app resumes a broken download)", details)
    ctx.model_info = info
    details.update(delay_ms=info.delay_ms, layers=info.params.get("n_layers"),
                   dim=info.params.get("dim"))
    if not info.has_weights:
        return Check("model", title, WARN, f"{info.path}: random weights (--dummy-weights): a "
                     "self-check only, the text is gibberish", GET_MODEL, details)
    return Check("model", title, OK, f"{info.path}: Voxtral Realtime, weights "
                 f"{_gib(weights_bytes)}, delay {info.delay_ms} ms", "", details)
