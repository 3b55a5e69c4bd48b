"""The ERROR records vLLM logs while a block runs (its loggers do not propagate to the root, so
pytest's caplog does not see them).

    with vllm_errors() as errors:
        ...
    assert errors == []
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def vllm_errors() -> Iterator[list[str]]:
    errors: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record):
            if record.levelno >= logging.ERROR:
                errors.append(record.getMessage())

    handler = Collect()
    logger = logging.getLogger("vllm")
    logger.addHandler(handler)
    try:
        yield errors
    finally:
        logger.removeHandler(handler)
