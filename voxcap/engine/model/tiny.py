"""Generate a tiny Voxtral Realtime model directory (params.json + tekken.json, and optionally
random weights in the real model's file layout: model/tiny_weights.py).

Without weights it is used with ``load_format="dummy"``: the text is gibberish, but every
mechanism of the real model runs (framing, streaming steps, flush, batching).  Word tokens
(" w0", " w1", ...) after the 256 byte tokens make the random model emit visible words, so
the text path (deltas -> words -> lines -> files) is exercised for real.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from ...framing import DEFAULT_DELAY_MS, SAMPLE_RATE, TOKENS_PER_SECOND
from .tiny_weights import write_weights

# Tekken v7 control tokens at the ids the real model uses; unused slots are filled.
_NAMED_SPECIALS = {
    0: "<unk>", 1: "<s>", 2: "</s>", 3: "[INST]", 4: "[/INST]", 5: "[AVAILABLE_TOOLS]",
    6: "[/AVAILABLE_TOOLS]", 7: "[TOOL_RESULTS]", 8: "[/TOOL_RESULTS]", 9: "[TOOL_CALLS]",
    10: "[IMG]", 11: "<pad>", 12: "[IMG_BREAK]", 13: "[IMG_END]", 14: "[PREFIX]",
    15: "[MIDDLE]", 16: "[SUFFIX]", 17: "[SYSTEM_PROMPT]", 18: "[/SYSTEM_PROMPT]",
    19: "[TOOL_CONTENT]", 20: "[ARGS]", 21: "[CALL_ID]", 24: "[AUDIO]", 25: "[BEGIN_AUDIO]",
    26: "[TRANSCRIBE]", 32: "[STREAMING_PAD]", 33: "[STREAMING_WORD]",
    34: "[REPEAT_AUDIO_TEXT]", 35: "[NEXT_AUDIO_TEXT]", 36: "[THINK]", 37: "[/THINK]",
}
NUM_SPECIALS = 40
_PATTERN = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|"
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|"
    r"\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

AUDIO_SECTION: dict[str, Any] = {
    "sampling_rate": SAMPLE_RATE,
    "frame_rate": TOKENS_PER_SECOND,
    "audio_encoding_config": {"num_mel_bins": 128, "hop_length": 160, "window_size": 400},
    "transcription_format": "streaming",
    "transcription_delay_ms": DEFAULT_DELAY_MS,
    "streaming_look_ahead_ms": 2.5,
    "streaming_look_back_ms": 52.5,
    "streaming_n_left_pad_tokens": 32,
}


def _tekken(num_words: int) -> dict:
    specials = [
        {"rank": i, "token_str": _NAMED_SPECIALS.get(i, f"<SPECIAL_{i}>"), "is_control": True}
        for i in range(NUM_SPECIALS)
    ]
    vocab = [
        {"rank": i, "token_bytes": base64.b64encode(bytes([i])).decode(), "token_str": None}
        for i in range(256)
    ]
    vocab += [
        {"rank": 256 + i, "token_bytes": base64.b64encode(f" w{i}".encode()).decode(),
         "token_str": f" w{i}"}
        for i in range(num_words)
    ]
    return {
        "config": {
            "pattern": _PATTERN,
            "num_vocab_tokens": len(vocab),
            "default_vocab_size": len(vocab) + NUM_SPECIALS,
            "default_num_special_tokens": NUM_SPECIALS,
            "version": "v7",
        },
        "vocab": vocab,
        "special_tokens": specials,
        "audio": dict(AUDIO_SECTION, audio_encoding_config=dict(AUDIO_SECTION["audio_encoding_config"])),
    }


def _params(vocab_size: int, max_len: int = 131072) -> dict:
    encoder = {
        "audio_encoding_args": {
            "sampling_rate": SAMPLE_RATE, "num_mel_bins": 128, "hop_length": 160, "window_size": 400,
            "chunk_length_s": None, "global_log_mel_max": 1.5, "transcription_format": "streaming",
        },
        "dim": 64, "n_layers": 2, "head_dim": 32, "hidden_dim": 128, "n_heads": 2,
        "n_kv_heads": 2, "vocab_size": vocab_size, "use_biases": True, "causal": True,
        "pos_embed": "rope", "ffn_type": "swiglu", "norm_type": "rms_norm",
        "sliding_window": 750, "rope_theta": 1e6, "norm_eps": 1e-5,
    }
    return {
        "dim": 64, "n_layers": 2, "head_dim": 32, "hidden_dim": 128, "n_heads": 2,
        "n_kv_heads": 1, "vocab_size": vocab_size, "tied_embeddings": True,
        "sliding_window": 8192, "model_max_length": max_len, "max_position_embeddings": max_len,
        "rope_theta": 1e6, "norm_eps": 1e-5, "causal": True, "use_biases": False,
        "ada_rms_norm_t_cond": True, "ada_rms_norm_t_cond_dim": 32,
        "multimodal": {
            "whisper_model_args": {
                "encoder_args": encoder,
                "downsample_args": {"downsample_factor": 4},
            }
        },
    }


def write_tiny_model(directory: str | Path, num_words: int = 2000, max_len: int = 131072,
                     weights_seed: int | None = None) -> Path:
    """Write params.json and tekken.json of a tiny Voxtral Realtime model into ``directory``
    (``max_len``: the model's own maximum session length, model_max_length); with
    ``weights_seed``, also random weights from that seed as consolidated.safetensors in the
    real model's layout (model/tiny_weights.py), loaded by vLLM like the real file."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    tekken = _tekken(num_words)
    vocab_size = tekken["config"]["default_vocab_size"]
    (out / "params.json").write_text(json.dumps(_params(vocab_size, max_len), indent=2))
    (out / "tekken.json").write_text(json.dumps(tekken))
    if weights_seed is not None:
        write_weights(out, weights_seed)
    return out
