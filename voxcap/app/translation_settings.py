"""The translated-captions settings (``AppSettings.translation``), declared once here: the
Settings dialog, ``--translate-to`` of ``voxcap live``/``transcribe`` and docs/reference derive
from it (``settings_schema``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..settings_schema import setting
from ..translate.languages import SPEECH_LANGUAGES

TRANSLATE_OFF = ""
ORIGINAL, BOTH, TRANSLATION = "original", "both", "translation"  # what the overlay shows


@dataclass
class TranslationSettings:
    translate_to: str = setting(
        TRANSLATE_OFF, label="&Translate captions into", words="language to translate into",
        choices=((TRANSLATE_OFF, "Off"), *SPEECH_LANGUAGES.items()), flag="--translate-to",
        metavar="LANG",
        flag_fix=f"give --translate-to one of {', '.join(SPEECH_LANGUAGES)}, or leave it out",
        flag_help="translate each finished caption line into LANG (an ISO 639-1 code) on the "
                  "CPU; needs the pair's model (voxcap translate-models download)")
    # in the overlay and to screen readers; a line shows its original until its translation
    # comes (a moment after the line ends), and when it is not translated
    show: str = setting(
        BOTH, label="S&how in the overlay and to screen readers", words="translation shown",
        choices=((ORIGINAL, "Original only"), (BOTH, "Original, its translation under it"),
                 (TRANSLATION, "Translation only")))

    def shown(self) -> str:
        """What the overlay shows: ``show``, or the original alone while nothing is translated."""
        return self.show if self.translate_to else ORIGINAL
