"""What graphics card voxcap needs, said the same way everywhere: README's card table is
``markdown_table()``, and the installer, the first-run dialog and README's "You need" say
``needs()``, both made from ``CARD_TIERS`` (tests/engine/sizing/test_cards.py checks each of them).

A new tier (e.g. 4-bit weights for 6 GB cards) is one more row; ``needs()`` follows from the rows:
the smallest memory of a tier that fits, and the oldest generation it fits on.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CardTier:
    cards: str           # the table's first column: memory and example cards
    precision: str       # what Automatic picks there
    streams: str         # sources captioned at once
    min_gb: int = 0      # the smallest card of the tier, in GB as sold (0: none fits)
    oldest_rtx: int = 20  # the oldest RTX generation the tier fits on (20, 30…)


CARD_TIERS: tuple[CardTier, ...] = (
    CardTier("16 GB and more (RTX 4060 Ti 16 GB, 4070 Ti Super, 4080, 3090, 4090, 5080…)",
             "bfloat16, the model's own", "2 (Both: you and them)", 16),
    CardTier("11–12 GB (RTX 3060 12 GB, 4070, 4070 Super, 5070, 2080 Ti…)",
             "FP8 weights (≈4 GiB less)", "2", 11),
    # measured on the H200 holding all but 6.3 / 5.0 GiB (docs/gpu-results.md)
    CardTier("8 GB, RTX 30/40/50 (RTX 4060, 3060 Ti, 3070, 5060…)",
             "4-bit weights + FP8 KV cache (accuracy not yet measured)",
             "2, also during a video call (≈5.8 GiB free needed)", 8, oldest_rtx=30),
    CardTier("6 GB, RTX 30/40 (RTX 3050 6 GB, 3060 / 4050 laptop…)",
             "4-bit weights + FP8 KV cache (accuracy not yet measured)",
             "1 (one source at a time)", 6, oldest_rtx=30),
    CardTier("8 GB and 6 GB RTX 20 (2060, 2070, 2080), 4 GB and less",
             "none fits: use a vLLM server on a bigger GPU", "–"),
)


def needs(tiers: tuple[CardTier, ...] = CARD_TIERS) -> str:
    """One line: the smallest card captions run on, e.g. "an NVIDIA GPU with 6 GB or more
    (RTX 30 series or newer; RTX 20: 11 GB or more)"."""
    fitting = [t for t in tiers if t.min_gb]
    smallest = min(fitting, key=lambda t: (t.min_gb, t.oldest_rtx))
    line = f"an NVIDIA GPU with {smallest.min_gb} GB or more"
    if smallest.oldest_rtx > 20:
        older = min((t for t in fitting if t.oldest_rtx < smallest.oldest_rtx),
                    key=lambda t: t.min_gb, default=None)
        line += f" (RTX {smallest.oldest_rtx} series or newer"
        line += f"; RTX 20: {older.min_gb} GB or more)" if older else ")"
    return line


def markdown_table(tiers: tuple[CardTier, ...] = CARD_TIERS) -> str:
    """README's card table."""
    rows = ["| your card | precision voxcap picks (Automatic) | sources at once |", "|---|---|---|"]
    rows += [f"| {t.cards} | {t.precision} | {t.streams} |" for t in tiers]
    return "\n".join(rows)


if __name__ == "__main__":  # the installer's closing text: python -m voxcap.engine.sizing.cards
    print(needs())
