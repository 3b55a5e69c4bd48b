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


# vLLM hands over what it produced since its last output: on a loaded machine one output (a
# TextDelta, a JSONL record) can carry two or more tokens, its index the first one's. Count and
# check them by token (seen: 1,174 deltas for 1,175 tokens, record 55 carrying 55 and 56).
def _ids(item) -> list:
    return list(item["tokens"] if isinstance(item, dict) else item.token_ids)


def _index(item) -> int:
    return item["index"] if isinstance(item, dict) else item.index


def tokens_in(items) -> int:
    """Tokens in these deltas or records (a remote delta carries no ids: one token each)."""
    return sum(len(_ids(d)) or 1 for d in items)


def indices_follow(items) -> bool:
    """Each delta's or record's index is the number of tokens before it: none lost, none twice."""
    k = 0
    for d in items:
        if _index(d) != k:
            return False
        k += len(_ids(d)) or 1
    return True
