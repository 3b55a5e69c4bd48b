"""Voxtral Realtime framing (engine-facts.md; mistral_common's padding), for assertions.

Prompt = BOS + 32 left-pad + delay tokens; the first step needs (delay tokens + 1) x 1,280
real samples + 40 look-ahead; then one token per 1,280 samples; the end appends
(delay tokens + 11) x 1,280 samples of silence (17 tokens at the default 480 ms).
"""

SAMPLE_RATE = 16000
STEP_SAMPLES = 1280  # 80 ms per token
LOOK_AHEAD = 40


def delay_tokens(delay_ms: int = 480) -> int:
    return delay_ms // 80


def first_step_samples(delay_ms: int = 480) -> int:
    """9,000 samples (562.5 ms) at the default delay."""
    return (delay_tokens(delay_ms) + 1) * STEP_SAMPLES + LOOK_AHEAD


def flush_tokens(delay_ms: int = 480) -> int:
    return delay_tokens(delay_ms) + 11


FIRST_STEP_SAMPLES = first_step_samples()
FLUSH_TOKENS = flush_tokens()


def expected_tokens(n_samples: int, delay_ms: int = 480) -> int:
    """One token for the first step, one per 1,280 further samples, plus the flush."""
    first = first_step_samples(delay_ms)
    return 1 + (n_samples + flush_tokens(delay_ms) * STEP_SAMPLES - first) // STEP_SAMPLES
