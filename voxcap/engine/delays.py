"""The transcription delays Voxtral Realtime was trained on, what each buys, and the presets.

The model card: "any multiple of 80 ms between 80 and 1200, as well as 2400 as a standalone
value"; the decoder is conditioned on the delay, so another value runs but was never trained.
The accuracy figures are the card's FLEURS average word error rates, quoted only where the card
gives one (a delay between two of them is said to lie between them, nothing more).

    TRAINED_DELAYS_MS              # (80, 160, ..., 1200, 2400)
    nearest_trained_delay(1600)    # 1200: a saved value outside is replaced by this
    delay_text(960)                # "960 ms — Accurate: word error rate 7.70 %"

No Qt, no vLLM: the settings' declaration (``engine.settings``) and every front end use it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..framing import DEFAULT_DELAY_MS, STEP_MS

LONGEST_TRAINED_MS = 2400  # the card's standalone value
TRAINED_DELAYS_MS: tuple[int, ...] = (*range(STEP_MS, 1200 + 1, STEP_MS), LONGEST_TRAINED_MS)
# the model card's FLEURS average word error rate (%) by delay: only these are published
CARD_WER = {160: 12.60, DEFAULT_DELAY_MS: 8.72, 960: 7.70, LONGEST_TRAINED_MS: 6.73}
TRAINED_IN_WORDS = f"{STEP_MS} to 1200 ms in steps of {STEP_MS}, or {LONGEST_TRAINED_MS}"


@dataclass(frozen=True)
class DelayPreset:
    name: str
    delay_ms: int


PRESETS = (DelayPreset("Fast", 240), DelayPreset("Balanced", DEFAULT_DELAY_MS),
           DelayPreset("Accurate", 960), DelayPreset("Most accurate", LONGEST_TRAINED_MS))


def nearest_trained_delay(delay_ms: float) -> int:
    """The trained delay closest to ``delay_ms`` (the shorter of two as close: less lag)."""
    return min(TRAINED_DELAYS_MS, key=lambda d: (abs(d - delay_ms), d))


def preset_of(delay_ms: int) -> DelayPreset | None:
    return next((p for p in PRESETS if p.delay_ms == delay_ms), None)


def wer_words(delay_ms: int) -> str:
    """What the model card says of this delay's accuracy, and no more."""
    if delay_ms in CARD_WER:
        return f"word error rate {CARD_WER[delay_ms]:.2f} %"
    below = [d for d in CARD_WER if d < delay_ms]
    above = [d for d in CARD_WER if d > delay_ms]
    if not below or not above:
        return "word error rate not on the model card"
    low, high = max(below), min(above)
    return (f"word error rate between {low} ms's {CARD_WER[low]:.2f} % and "
            f"{high} ms's {CARD_WER[high]:.2f} %")


def delay_text(delay_ms: int) -> str:
    """The delay as Settings lists it: its preset's name, the lag and the accuracy."""
    preset = preset_of(delay_ms)
    name = f" — {preset.name}" if preset else ""
    default = " (default)" if delay_ms == DEFAULT_DELAY_MS else ""
    return f"{delay_ms} ms{name}{default}: {wer_words(delay_ms)}"


def lag_words(delay_ms: int) -> str:
    """The lag a delay adds, in a sentence."""
    return (f"Captions come {delay_ms / 1000:g} s after the words are spoken, plus the engine's "
            "own time for each step.")
