"""Installed pairs through the real CTranslate2 and SentencePiece, with a tiny random Marian model
converted by CTranslate2's own converter: loading, routes through English, broken packages."""

from __future__ import annotations

import shutil

import pytest
from support.tiny_translation import copy_package

from voxcap.commands.flag_words import in_flags
from voxcap.gui.settings.setting_words import for_the_app
from voxcap.translate.package import (
    PairTranslator,
    TranslationModelError,
    installed_pairs,
    read_package,
    route,
)
from voxcap.translate.worker import Translators

LINES = ["bonjour le monde", "le renard brun rapide saute"]


def test_a_pair_translates_through_ctranslate2(tiny_package):
    translator = PairTranslator(read_package(tiny_package))
    out = translator.translate(LINES)
    assert len(out) == 2 and all(isinstance(t, str) and t for t in out)
    assert translator.translate(LINES[:1]) == out[:1]  # deterministic: same line, same text
    assert out[0] != out[1]


def test_a_missing_pair_goes_through_english(tiny_package, tmp_path):
    copy_package(tiny_package, tmp_path / "fr_en", "fr", "en")
    copy_package(tiny_package, tmp_path / "en_de", "en", "de")
    pairs = installed_pairs(tmp_path)
    assert [p.name for p in route(pairs, "fr", "de")] == ["fr-en", "en-de"]
    assert [p.name for p in route(pairs, "fr", "en")] == ["fr-en"]
    translators = Translators(tmp_path)  # the app's: in the translation process
    try:
        two_steps = translators.get("fr", "de").translate(LINES[:1])
    finally:
        translators.close()
    one = PairTranslator(pairs[("fr", "en")]).translate(LINES[:1])
    assert two_steps == PairTranslator(pairs[("en", "de")]).translate(one)
    with pytest.raises(TranslationModelError) as err:
        route(pairs, "de", "fr")
    assert "German to French" in err.value.message
    assert in_flags(err.value.fix) == "voxcap translate-models download de-fr or de-en and en-fr"
    assert for_the_app(err.value.fix) == ("download de-fr or de-en and en-fr in Settings → "
                                          "Translation → Translation models")


def test_a_half_installed_package_is_named_and_left_out(tiny_package, tmp_path):
    copy_package(tiny_package, tmp_path / "fr_en", "fr", "en")
    (tmp_path / "fr_en" / "sentencepiece.model").unlink()
    with pytest.raises(TranslationModelError, match="incomplete: it has no sentencepiece.model"):
        read_package(tmp_path / "fr_en")
    assert installed_pairs(tmp_path) == {}


def test_a_corrupt_model_is_named_with_its_fix(tiny_package, tmp_path):
    folder = copy_package(tiny_package, tmp_path / "fr_en", "fr", "en")
    model = folder / "model" / "model.bin"
    model.write_bytes(model.read_bytes()[:100])
    with pytest.raises(TranslationModelError) as err:
        PairTranslator(read_package(folder))
    assert "fr-en translation model is corrupt" in err.value.message
    assert "translate-models remove fr-en" in in_flags(err.value.fix)
    shutil.rmtree(folder)



def test_a_benchmark_decodes_exactly_as_many_tokens_as_the_source(tiny_package):
    """``length_ratio``: a model of random weights says nothing of a translation's length, so a
    benchmark fixes it (1.0: as long as the source)."""
    free = PairTranslator(read_package(tiny_package))
    same = PairTranslator(read_package(tiny_package), length_ratio=1.0)
    double = PairTranslator(read_package(tiny_package), length_ratio=2.0)
    lengths = set()
    for text in ("bonjour le monde", "le renard brun rapide saute par dessus le chien"):
        source = same._sp.encode(text, out_type=str)
        assert len(same.decode(source)) == len(source)
        assert len(double.decode(source)) == 2 * len(source)
        lengths.add(len(free.decode(source)) - len(source))
    assert lengths != {0}  # without it the random model's length is its own
