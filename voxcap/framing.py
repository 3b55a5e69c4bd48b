"""How Voxtral Realtime frames audio into steps: the one home of these numbers.

The model hears 16 kHz mono and emits one token per 80 ms of it (1,280 samples), 12.5 tokens a
second. A session's prompt is BOS, 32 left-pad tokens and one token per 80 ms of transcription
delay, so its first step needs (delay tokens + 1) x 1,280 real samples plus 40 samples of
look-ahead (9,000 at the default 480 ms); every later step needs 1,280 more. At the end the
model is fed (delay tokens + 11) steps of silence, each of which brings a token (the flush).

Nothing here imports Qt or vLLM: every layer may use it. The in-process engine reads the same
numbers from the model's own tokenizer; the remote engine and the benchmarks, which have no
tokenizer, use these.
"""

from __future__ import annotations

SAMPLE_RATE = 16000  # samples a second the model hears
STEP_MS = 80  # audio per decoding step (one token)
STEP_SAMPLES = SAMPLE_RATE * STEP_MS // 1000  # 1,280
STEP_SECONDS = STEP_MS / 1000
TOKENS_PER_SECOND = 1000 / STEP_MS  # 12.5
LOOK_AHEAD_SAMPLES = 40  # the first step also needs these samples past its last full step
FLUSH_EXTRA_TOKENS = 11  # silence steps appended at the end beyond the delay's
DEFAULT_DELAY_MS = 480  # the model's own transcription delay


def delay_tokens(delay_ms: int = DEFAULT_DELAY_MS) -> int:
    return delay_ms // STEP_MS


def first_step_samples(delay_ms: int = DEFAULT_DELAY_MS) -> int:
    """Real samples a session's first step needs (9,000 at the default 480 ms)."""
    return (delay_tokens(delay_ms) + 1) * STEP_SAMPLES + LOOK_AHEAD_SAMPLES


def flush_tokens(delay_ms: int = DEFAULT_DELAY_MS) -> int:
    """Tokens the end of a session brings with no audio of their own (17 at 480 ms)."""
    return delay_tokens(delay_ms) + FLUSH_EXTRA_TOKENS


def steps_ready(samples: int, first_step: int) -> int:
    """Steps a session can run once ``samples`` real samples were handed over."""
    return 0 if samples < first_step else 1 + (samples - first_step) // STEP_SAMPLES
