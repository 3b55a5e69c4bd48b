"""Random weights for a Voxtral Realtime model, in the file layout the real model ships.

``consolidated.safetensors`` with Mistral's tensor names (711 tensors for the real 4.4 B model:
421 in the audio encoder, 11 per decoder layer, the token embeddings, the audio-language
adapter and the final norm), bf16 as published, shapes from params.json. vLLM's Mistral
loader (``load_format="mistral"``) reads it like the real file, so the loading path every
user takes runs with it.

The values are what makes the tokens depend on the audio, deterministic from a seed: matrices
Xavier-normal (std sqrt(2 / (fan_in + fan_out))) but the projections back into the residual
stream (std 0.02), biases 0, norms 1.0, and no response to a constant input where the input has
a large constant part. Measured with the tiny model on 8 s of speech-like audio: 47 distinct ids
in 110 tokens, and a 20 ms shift of the audio leaves 33 of 110 the same. What did not work:
vLLM's dummy loader (every tensor, norms too, U(-0.001, 0.001)): a few ids whatever the input; a
flat std of 0.02: the layers stay small beside the input token's embedding and, embeddings being
tied, the model echoes its input token (110 of 110 [STREAMING_PAD]); plain Xavier: the
attention's average over the past and the constant parts dominate (1 to 12 distinct ids).

The file is written with no library (an 8-byte header length, a JSON header, raw little-endian
data): no torch or safetensors needed to make a model, and the same bytes from the same seed.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import numpy as np

WEIGHTS_FILE = "consolidated.safetensors"
EMBEDDING_PREFIX = "mm_streams_embeddings.embedding_module"
ENCODER_PREFIX = f"{EMBEDDING_PREFIX}.whisper_encoder"
NUM_MEL_BINS = 128
EOS_ID = 2  # </s> in Mistral's tekken tokenizers (the real model's and the tiny one's)


def _layer_shapes(p: str, dim: int, heads: int, kv_heads: int, head_dim: int,
                  hidden: int) -> dict[str, tuple[int, ...]]:
    """The weights of one transformer layer (attention, SwiGLU feed-forward, two norms)."""
    return {
        f"{p}.attention.wq.weight": (heads * head_dim, dim),
        f"{p}.attention.wk.weight": (kv_heads * head_dim, dim),
        f"{p}.attention.wv.weight": (kv_heads * head_dim, dim),
        f"{p}.attention.wo.weight": (dim, heads * head_dim),
        f"{p}.attention_norm.weight": (dim,), f"{p}.ffn_norm.weight": (dim,),
        f"{p}.feed_forward.w1.weight": (hidden, dim), f"{p}.feed_forward.w2.weight": (dim, hidden),
        f"{p}.feed_forward.w3.weight": (hidden, dim),
    }


def tensor_shapes(params: dict) -> dict[str, tuple[int, ...]]:
    """Every tensor of a Mistral-format Voxtral Realtime checkpoint and its shape, from
    params.json; ``*.norm*`` tensors are RMSNorm weights, ``*.bias`` biases."""
    d, hd = params["dim"], params["head_dim"]
    nh, nkv, hidden = params["n_heads"], params["n_kv_heads"], params["hidden_dim"]
    shapes: dict[str, tuple[int, ...]] = {
        f"{EMBEDDING_PREFIX}.tok_embeddings.weight": (params["vocab_size"], d),
        "norm.weight": (d,),
    }
    if not params.get("tied_embeddings", True):
        shapes["output.weight"] = (params["vocab_size"], d)
    for i in range(params["n_layers"]):
        p = f"layers.{i}"
        shapes.update(_layer_shapes(p, d, nh, nkv, hd, hidden))
        if params.get("ada_rms_norm_t_cond"):
            t = params["ada_rms_norm_t_cond_dim"]
            shapes[f"{p}.ada_rms_norm_t_cond.0.weight"] = (t, d)
            shapes[f"{p}.ada_rms_norm_t_cond.2.weight"] = (d, t)
    whisper = params["multimodal"]["whisper_model_args"]
    enc = whisper["encoder_args"]
    e, ehd, eh, ekv, ehidden = (enc["dim"], enc["head_dim"], enc["n_heads"],
                                enc.get("n_kv_heads", enc["n_heads"]), enc["hidden_dim"])
    mels = enc.get("audio_encoding_args", {}).get("num_mel_bins", NUM_MEL_BINS)
    bias = bool(enc.get("use_biases", True))
    for k, c_in in ((0, mels), (1, e)):
        shapes[f"{ENCODER_PREFIX}.conv_layers.{k}.conv.weight"] = (e, c_in, 3)
        shapes[f"{ENCODER_PREFIX}.conv_layers.{k}.conv.bias"] = (e,)
    for i in range(enc["n_layers"]):
        p = f"{ENCODER_PREFIX}.transformer.layers.{i}"
        shapes.update(_layer_shapes(p, e, eh, ekv, ehd, ehidden))
        if bias:  # the real encoder: q, v, o and the down projection have biases (k never)
            shapes.update({f"{p}.attention.wq.bias": (eh * ehd,), f"{p}.attention.wv.bias": (ekv * ehd,),
                           f"{p}.attention.wo.bias": (e,), f"{p}.feed_forward.w2.bias": (e,)})
    shapes[f"{ENCODER_PREFIX}.transformer.norm.weight"] = (e,)
    factor = whisper.get("downsample_args", {}).get("downsample_factor", 4)
    shapes[f"{EMBEDDING_PREFIX}.audio_language_projection.0.weight"] = (d, e * factor)
    shapes[f"{EMBEDDING_PREFIX}.audio_language_projection.2.weight"] = (d, d)
    return shapes


# the layers' projections back into the residual stream: small, so that each step's input (audio
# features in the encoder; audio embedding + last token in the decoder) dominates what comes out,
# not the attention's average over the past, which hardly changes from one step to the next
_INTO_RESIDUAL = ("attention.wo.weight", "feed_forward.w2.weight")
RESIDUAL_STD = 0.02
# weights whose input has a large constant part: the log-mel features, and GELU outputs
_ZERO_MEAN = ("conv_layers.0.conv.weight", "conv_layers.1.conv.weight",
              "audio_language_projection.2.weight")


def _is_norm(name: str) -> bool:
    return "norm" in name.rsplit(".", 2)[-2]


def xavier_std(shape: tuple[int, ...]) -> float:
    """sqrt(2 / (fan_in + fan_out)) of a (out, in[, kernel]) weight."""
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return float(np.sqrt(2.0 / ((shape[0] + shape[1]) * receptive)))


def random_tensors(params: dict, seed: int = 0) -> dict[str, np.ndarray]:
    """Float32 values for every tensor of ``tensor_shapes``: norms 1, biases 0, the rest
    Xavier-normal, each from its own stream of ``seed`` (so one tensor never shifts another)."""
    out = {}
    for k, (name, shape) in enumerate(sorted(tensor_shapes(params).items())):
        if _is_norm(name):
            out[name] = np.ones(shape, np.float32)
        elif name.endswith(".bias"):
            out[name] = np.zeros(shape, np.float32)
        else:
            rng = np.random.default_rng([seed, k])
            std = RESIDUAL_STD if name.endswith(_INTO_RESIDUAL) else xavier_std(shape)
            w = rng.normal(0.0, std, shape)
            if name.endswith(_ZERO_MEAN):
                # no response to a constant input: the log-mel spectrum sits around a large
                # constant (silence clamps every bin to one value) and a GELU's output has a
                # positive mean; either would otherwise drown out what the audio says, and the
                # model would give one token whatever it hears
                w -= w.mean(axis=tuple(range(1, w.ndim)), keepdims=True)
            if name.endswith("tok_embeddings.weight"):
                # never </s>: random weights would sample it about once in a thousand steps,
                # where a trained model does not mid-speech. A streaming session goes on past
                # one (vLLM 0.32 resumes a resumable request with its next input: seen, the
                # same tokens before and after), but it ends vLLM's turn, which the parity
                # tests' reference need not do alike. With tied embeddings a zero row gives it
                # a logit of 0, below the best of the others.
                w[EOS_ID] = 0.0
            out[name] = w.astype(np.float32)
    return out


def to_bf16_bytes(x: np.ndarray) -> bytes:
    """IEEE bfloat16 (round to nearest even) of a float32 array, little-endian."""
    u = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return rounded.astype("<u2").tobytes()


def write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    """``tensors`` as a bf16 safetensors file, written to a temporary name and moved in place."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        data = to_bf16_bytes(tensors[name])
        header[name] = {"dtype": "BF16", "shape": list(tensors[name].shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)  # the data starts 8-byte aligned
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(head)))
        f.write(head)
        for blob in blobs:
            f.write(blob)
    tmp.replace(path)


def write_weights(directory: str | Path, seed: int = 0) -> Path:
    """Random weights for the model whose params.json is in ``directory``, as WEIGHTS_FILE."""
    out = Path(directory)
    params = json.loads((out / "params.json").read_text(encoding="utf-8"))
    target = out / WEIGHTS_FILE
    write_safetensors(target, random_tensors(params, seed))
    return target
