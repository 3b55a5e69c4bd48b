"""Realtime audio chunks skip the generic Hugging Face processor call in vLLM 0.32.0's API
server (``VOXCAP_VLLM_REALTIME_INPUT=1``; set by ``voxcap serve``; off unless set).

Every 80 ms chunk of a realtime session goes through the renderer's multimodal processor
(``VoxtralRealtimeMultiModalProcessor``) on the API server's thread. Its
``_apply_hf_processor_main`` calls the model's ``MistralCommonVoxtralProcessor`` through
transformers' ``ProcessorMixin.__call__``: a new processor object per chunk, the keyword
arguments matched against its signature (``inspect.signature``), a dummy text tokenized by
mistral_common (whose ids vLLM then ignores: realtime prompts are token ids already), and only
then the feature extractor, which for a streaming model returns the audio as a float32 tensor
(``MistralCommonFeatureExtractor.__call__``: no padding when ``is_streaming``). Profiled under
16 sessions on the CPU build (benchmarks/capacity.py --profile): that call was 16 % of the API
server's CPU samples, half of it the text and signature work.

With the fix, for a processor of a streaming audio config whose chunk carries audio alone (no
request ``mm_processor_kwargs``, none configured), ``_apply_hf_processor_main`` calls the same
feature extractor directly and post-processes its output the way vLLM's
``InputProcessingContext.call_hf_processor`` does (``_postprocess_output``: floating tensors to
the model's dtype, on the CPU); every other input takes vLLM's own path. The multimodal input
is identical (tests/engine/vllm_adapter/test_realtime_input.py compares prompt ids, tensors, dtypes,
placeholders and hashes of real chunks with the fix off and on; benchmarks/capacity.py compares
each session's text). Guarded to the exact vLLM version; does nothing with a logged warning
elsewhere. Upstream-ready report: docs/perf/upstream-realtime-processor.md.
"""

from __future__ import annotations

import logging
import os

from .pin import PINNED_VLLM, install_wrapper, installed, pinned_attr

logger = logging.getLogger("vllm.voxcap_patches")

REALTIME_INPUT_ENV = "VOXCAP_VLLM_REALTIME_INPUT"
_FLAG = "_voxcap_realtime_input"


def enabled() -> bool:
    return os.environ.get(REALTIME_INPUT_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def apply() -> bool:
    """Wrap VoxtralRealtimeMultiModalProcessor._apply_hf_processor_main (once per process)."""
    cls = pinned_attr("realtime input", "voxcap/engine/vllm_adapter/realtime_input.py against "
                      "its multimodal processor", logger,
                      "vllm.model_executor.models.voxtral_realtime",
                      "VoxtralRealtimeMultiModalProcessor")
    if cls is None:
        return False
    original = cls._apply_hf_processor_main
    if getattr(original, _FLAG, False):
        return True  # a second plugin load in the same process

    def _apply_hf_processor_main(self, mm_items, hf_kwargs):
        direct = direct_audio_features(self, mm_items, hf_kwargs)
        if direct is not None:
            return direct
        return original(self, mm_items, hf_kwargs)

    install_wrapper(cls, "_apply_hf_processor_main", _FLAG, _apply_hf_processor_main)
    logger.info("voxcap realtime input applied (vLLM %s, pid %d): realtime chunks go to the "
                "feature extractor directly", PINNED_VLLM, os.getpid())
    return True


def applied() -> bool:
    return installed(logger, "vllm.model_executor.models.voxtral_realtime",
                     "VoxtralRealtimeMultiModalProcessor", "_apply_hf_processor_main", _FLAG)


def direct_audio_features(processor, mm_items, hf_kwargs):
    """What vLLM's HF processor call returns for a streaming chunk of audio alone, computed by
    the feature extractor directly; None where this does not apply (vLLM's path then runs)."""
    from transformers import BatchFeature

    if hf_kwargs:  # a request's mm_processor_kwargs: leave them to the generic call
        return None
    info = processor.info
    ctx = info.ctx
    if ctx.get_merged_mm_kwargs({}):  # configured processor kwargs
        return None
    extractor = info.get_feature_extractor()
    if not extractor.audio_encoder.audio_config.is_streaming:
        return None
    hf_data, kwargs, passthrough = processor._get_hf_mm_inputs(mm_items, hf_kwargs)
    if set(hf_data) - {"text", "audio"} or "audio" not in hf_data or passthrough:
        return None
    if set(kwargs) - {"truncation", "return_tensors"}:
        return None
    # MistralCommonFeatureExtractor.__call__ as ProcessorMixin reaches it, then the context's
    # post-processing of the processor's output (dtype, device)
    out = extractor(hf_data["audio"], return_tensors=kwargs.get("return_tensors", "pt"))
    processed = BatchFeature(ctx._postprocess_output(out.data))
    return processor._finalize_hf_mm_data(hf_data, kwargs, passthrough, processed)
