"""Installed translation pairs in Argos Translate's package format, and the routes between them.

A package is a folder (an ``.argosmodel`` file is a zip of one):

    fr_en/metadata.json          {"from_code": "fr", "to_code": "en", "package_version": "1.9", ...}
    fr_en/model/                 a CTranslate2 model (model.bin, config.json, *vocabulary*)
    fr_en/sentencepiece.model    the SentencePiece model its text is cut with

Only this format is used, not the ``argostranslate`` package (it pulls spaCy and Stanza, which
split paragraphs into sentences: a caption line is already one). ``stanza/`` in a package is
ignored.

    pairs = installed_pairs(folder)          # {("fr", "en"): Pair, ...}
    route(pairs, "fr", "de")                 # [fr->en, en->de] through English, or raises
    translator = PairTranslator(pair)        # loads CTranslate2 (CPU) and SentencePiece
    translator.translate(["Bonjour."])       # ["Hello."] (the app: in ``child``'s process)
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path

from ..errors import VoxcapError
from ..setting_refs import ref
from .languages import PIVOT, language_name

log = logging.getLogger(__name__)

METADATA = "metadata.json"
MODEL_DIR = "model"
SENTENCEPIECE = "sentencepiece.model"
MAX_TOKENS = 256  # a caption line is far shorter; bounds a runaway decode


class TranslationModelError(VoxcapError):
    """No model for a pair, or an installed one that cannot be used."""


class NoRouteError(TranslationModelError):
    """No installed pair (nor two through English) takes ``source`` to ``target``."""

    def __init__(self, message: str, fix: str, source: str, target: str) -> None:
        super().__init__(message, fix)
        self.source, self.target = source, target


@dataclass(frozen=True)
class Pair:
    source: str
    target: str
    folder: Path
    version: str = ""

    @property
    def name(self) -> str:
        return f"{self.source}-{self.target}"

    def disk_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.folder.rglob("*") if p.is_file())


def read_package(folder: Path) -> Pair:
    """The pair a package folder holds; raises ``TranslationModelError`` naming what is missing."""
    fix = f"remove {folder} and download the pair again (voxcap translate-models download)"
    try:
        meta = json.loads((folder / METADATA).read_text(encoding="utf-8"))
        source, target = str(meta["from_code"]), str(meta["to_code"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise TranslationModelError(f"{folder} is not a translation package ({METADATA}: {exc}).",
                                    fix) from None
    for needed in (MODEL_DIR + "/model.bin", SENTENCEPIECE):
        if not (folder / needed).is_file():
            raise TranslationModelError(f"The {source}-{target} translation model in {folder} "
                                        f"is incomplete: it has no {needed}.", fix)
    return Pair(source, target, folder, str(meta.get("package_version", "")))


def installed_pairs(root: Path) -> dict[tuple[str, str], Pair]:
    """Every usable package under ``root``; a broken one is logged and left out."""
    pairs: dict[tuple[str, str], Pair] = {}
    if not root.is_dir():
        return pairs
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        try:
            pair = read_package(folder)
        except TranslationModelError as exc:
            log.warning("%s", exc.message)
            continue
        pairs[(pair.source, pair.target)] = pair
    return pairs


def route(pairs: dict[tuple[str, str], Pair], source: str, target: str) -> list[Pair]:
    """The pairs that take ``source`` to ``target``: direct, else through English."""
    if (source, target) in pairs:
        return [pairs[(source, target)]]
    if (source, PIVOT) in pairs and (PIVOT, target) in pairs:
        return [pairs[(source, PIVOT)], pairs[(PIVOT, target)]]
    need = [f"{source}-{target}"] if PIVOT in (source, target) else \
        [f"{source}-{target}", f"or {source}-{PIVOT} and {PIVOT}-{target}"]
    raise NoRouteError(
        f"No translation model from {language_name(source)} to {language_name(target)} is installed.",
        ref("models_download", " ".join(need)), source, target)


def remove_package(pair: Pair) -> None:
    shutil.rmtree(pair.folder)


class PairTranslator:
    """One pair on the CPU. ``translate`` is serialized (CTranslate2's translator is thread-safe,
    but one line at a time keeps the worker's CPU share to ``threads`` cores).

    ``length_ratio``: decode exactly that many tokens per source token (a benchmark's model of
    random weights says nothing of its own length); None: until the model ends the sentence."""

    def __init__(self, pair: Pair, *, threads: int = 1, length_ratio: float | None = None) -> None:
        try:
            import ctranslate2
            import sentencepiece
        except ImportError as exc:
            raise TranslationModelError(f"Translation needs {exc.name}, which is not installed.",
                                        "pip install 'voxcap[translate]'") from None
        self.pair = pair
        fix = ref("models_reinstall", pair.name)
        try:
            self._sp = sentencepiece.SentencePieceProcessor(
                model_file=str(pair.folder / SENTENCEPIECE))
            self._model = ctranslate2.Translator(str(pair.folder / MODEL_DIR), device="cpu",
                                                 inter_threads=1, intra_threads=threads)
        except (RuntimeError, OSError, ValueError) as exc:
            raise TranslationModelError(f"The {pair.name} translation model is corrupt "
                                        f"({str(exc).splitlines()[0] if str(exc) else exc!r}).",
                                        fix) from None
        self._lock = threading.Lock()
        self.length_ratio = length_ratio

    def translate(self, texts: list[str]) -> list[str]:
        return [self._one(t) for t in texts]  # each line bounded by its own length

    def _one(self, text: str) -> str:
        return self._sp.decode(self.decode(self._sp.encode(text, out_type=str)))

    def decode(self, tokens: list[str]) -> list[str]:
        """The translation's pieces of the source's."""
        # a translation is seldom twice its source: the bound stops a model that rambles
        longest, shortest = min(MAX_TOKENS, 2 * len(tokens) + 8), 0
        if self.length_ratio is not None:
            longest = shortest = max(1, min(MAX_TOKENS, round(self.length_ratio * len(tokens))))
        with self._lock:
            result = self._model.translate_batch([tokens], beam_size=2, max_decoding_length=longest,
                                                 min_decoding_length=shortest)
        return list(result[0].hypotheses[0])
