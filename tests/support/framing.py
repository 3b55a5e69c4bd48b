"""Voxtral Realtime framing for assertions: the numbers are voxcap.framing's (its docstring says
how a session is framed); what only tests need is added here."""

from voxcap.framing import SAMPLE_RATE, STEP_SAMPLES, first_step_samples, flush_tokens

__all__ = ["SAMPLE_RATE", "STEP_SAMPLES", "FIRST_STEP_SAMPLES", "first_step_samples",
           "expected_tokens", "tokens_in", "indices_follow"]
FIRST_STEP_SAMPLES = first_step_samples()


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
