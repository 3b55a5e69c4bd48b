"""The parts of vLLM 0.32's internals the in-process engine uses (``vllm.v1`` paths, private
names, module layouts that move between releases), in one place: the engine asks here, so a vLLM
upgrade changes this file, not the engine. Each import is lazy: importing vLLM takes seconds."""

from __future__ import annotations

from pathlib import Path


def async_llm_class():
    """vLLM's streaming engine client (v1's AsyncLLM)."""
    from vllm.v1.engine.async_llm import AsyncLLM

    return AsyncLLM


def stat_logger_base():
    """The base class of vLLM's per-step stat loggers."""
    from vllm.v1.metrics.loggers import StatLoggerBase

    return StatLoggerBase


def model_class(model_config):
    """The model class vLLM runs for ``model_config`` (its realtime audio buffer lives there)."""
    from vllm.model_executor.model_loader import get_model_cls

    return get_model_cls(model_config)


def tokenizer(model_config):
    """vLLM's tokenizer for ``model_config``, from its cache."""
    from vllm.tokenizers import cached_tokenizer_from_config

    return cached_tokenizer_from_config(model_config)


def prompt_renderer(engine, model_config):
    """An async function turning one realtime prompt into the engine's input, as vLLM's realtime
    server does (``parse_model_prompt`` then the renderer)."""
    from vllm.renderers.inputs.preprocess import parse_model_prompt

    async def render(prompt):
        (engine_input,) = await engine.renderer.render_cmpl_async(
            [parse_model_prompt(model_config, prompt)])
        return engine_input

    return render


def inspect_model_class(arch: str) -> Path:
    """Have vLLM inspect ``arch``'s model class (a subprocess of its own) and cache what it
    learns; returns the cache file."""
    from vllm.model_executor.models.registry import ModelRegistry

    registered = ModelRegistry.models.get(arch)
    if registered is None:
        raise RuntimeError(f"this vLLM does not know {arch}")
    registered.inspect_model_cls()  # reads the cache, or inspects and writes it
    path = registered._get_cache_dir() / registered._get_cache_filename()
    if not path.exists():
        raise RuntimeError(f"vLLM inspected {arch} but wrote no cache file ({path})")
    return path
