"""The languages Voxtral Realtime transcribes (its model card), by ISO 639-1 code."""

from __future__ import annotations

SPEECH_LANGUAGES: dict[str, str] = {
    "en": "English", "fr": "French", "es": "Spanish", "de": "German", "ru": "Russian",
    "zh": "Chinese", "ja": "Japanese", "it": "Italian", "pt": "Portuguese", "nl": "Dutch",
    "ar": "Arabic", "hi": "Hindi", "ko": "Korean",
}
OTHER = "other"  # a line in none of them
PIVOT = "en"  # most OPUS-MT/Argos pairs go to or from English


def language_name(code: str) -> str:
    """``"de"`` -> ``"German"``; an unknown code as given."""
    return SPEECH_LANGUAGES.get(code, "another language" if code == OTHER else code)
