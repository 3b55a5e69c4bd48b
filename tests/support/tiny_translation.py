"""A tiny random Marian (OPUS-MT architecture) translation model, made here and converted with
CTranslate2's own converter, packaged the way the downloader installs it (Argos Translate's
format): a folder and an ``.argosmodel`` zip. Its output is gibberish; its plumbing is real.

    folder = make_package(tmp / "fr_en", "fr", "en")
    archive = make_archive(folder, tmp / "translate-fr_en.argosmodel")

Building takes ~15 s (importing transformers and torch), so tests share one per session.
``shape=OPUS_MT_BASE`` builds a model of a real OPUS-MT base model's size instead (random
weights, for ``benchmarks/translate_latency.py --real-shape``: ~75 MB in int8, a minute).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path

CORPUS = [
    "the quick brown fox jumps over the lazy dog", "hello world good morning",
    "le renard brun rapide saute par dessus le chien", "bonjour le monde",
    "wir sollten das treffen verschieben", "ich glaube es regnet morgen",
]


@dataclass(frozen=True)
class MarianShape:
    layers: int  # encoder and decoder each
    width: int
    heads: int
    ffn: int
    vocab: int  # the model's vocabulary (the SentencePiece pieces, then fillers up to it)
    sp_vocab: int  # the SentencePiece model's pieces (at most: a small corpus gives fewer)


TINY = MarianShape(layers=1, width=16, heads=2, ffn=32, vocab=0, sp_vocab=40)
# an OPUS-MT base model (Marian transformer-base; Helsinki-NLP/opus-mt-de-en's vocabulary)
OPUS_MT_BASE = MarianShape(layers=6, width=512, heads=8, ffn=2048, vocab=58101, sp_vocab=8000)


def _sentencepiece(work: Path, shape: MarianShape, corpus_text: str = "") -> Path:
    import sentencepiece as spm

    corpus = work / "corpus.txt"
    corpus.write_text(corpus_text or "\n".join(CORPUS * 20), encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(work / "sp"),
                                   vocab_size=shape.sp_vocab, hard_vocab_limit=False,
                                   model_type="unigram", character_coverage=1.0, bos_id=-1,
                                   pad_id=-1, eos_id=1, unk_id=0, minloglevel=2)
    return work / "sp.model"


def _marian(work: Path, sp_model: Path, seed: int, shape: MarianShape = TINY) -> Path:
    """A Transformers Marian checkpoint of ``shape`` with a MarianTokenizer's files."""
    import sentencepiece as spm
    import torch
    from transformers import MarianConfig, MarianMTModel

    hf = work / "hf"
    hf.mkdir()
    shutil.copy(sp_model, hf / "source.spm")
    shutil.copy(sp_model, hf / "target.spm")
    sp = spm.SentencePieceProcessor(model_file=str(sp_model))
    vocab = {"</s>": 0, "<unk>": 1}
    for i in range(sp.get_piece_size()):
        vocab.setdefault(sp.id_to_piece(i), len(vocab))
    while len(vocab) < shape.vocab - 1:  # a real model's pieces the small corpus did not give
        vocab[f"<filler{len(vocab)}>"] = len(vocab)
    vocab["<pad>"] = len(vocab)
    (hf / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (hf / "tokenizer_config.json").write_text(json.dumps(
        {"tokenizer_class": "MarianTokenizer", "model_max_length": 64}), encoding="utf-8")
    torch.manual_seed(seed)
    config = MarianConfig(vocab_size=len(vocab), d_model=shape.width, encoder_layers=shape.layers,
                          decoder_layers=shape.layers, encoder_attention_heads=shape.heads,
                          decoder_attention_heads=shape.heads, encoder_ffn_dim=shape.ffn,
                          decoder_ffn_dim=shape.ffn, max_position_embeddings=512,
                          pad_token_id=vocab["<pad>"], eos_token_id=0,
                          decoder_start_token_id=vocab["<pad>"])
    MarianMTModel(config).save_pretrained(hf)
    return hf


def make_package(folder: Path, source: str, target: str, *, seed: int = 0,
                 shape: MarianShape = TINY, corpus_text: str = "",
                 quantization: str | None = None) -> Path:
    """An installed-format package folder for ``source``-``target`` (random weights);
    ``corpus_text``: what the SentencePiece model is trained on; ``quantization``: CTranslate2's
    (Argos Translate ships "int8")."""
    import ctranslate2

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sp_model = _sentencepiece(work, shape, corpus_text)
        hf = _marian(work, sp_model, seed, shape)
        folder.mkdir(parents=True)
        with warnings.catch_warnings():  # MarianTokenizer recommends sacremoses: not used here
            warnings.simplefilter("ignore")
            ctranslate2.converters.TransformersConverter(str(hf)).convert(
                str(folder / "model"), quantization=quantization)
        shutil.copy(sp_model, folder / "sentencepiece.model")
    (folder / "metadata.json").write_text(json.dumps({
        "package_version": "1.0", "argos_version": "1.9.0", "from_code": source,
        "to_code": target, "from_name": source, "to_name": target}), encoding="utf-8")
    return folder


def copy_package(folder: Path, to: Path, source: str, target: str) -> Path:
    """The same weights relabelled as another pair (building one takes seconds)."""
    shutil.copytree(folder, to)
    meta = json.loads((to / "metadata.json").read_text(encoding="utf-8"))
    meta.update(from_code=source, to_code=target)
    (to / "metadata.json").write_text(json.dumps(meta), encoding="utf-8")
    return to


def make_archive(folder: Path, archive: Path) -> Path:
    """The ``.argosmodel`` zip of a package: its files under one top folder, as Argos ships."""
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                z.write(p, f"{folder.name}/{p.relative_to(folder).as_posix()}")
    return archive
