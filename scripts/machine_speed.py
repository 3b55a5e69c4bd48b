"""Prints how fast this machine runs Python, so that a test run's time can be compared with
the figures in docs/guide/developers.md: machines of one kind differ (the same suite took 12 to
20 minutes on different days; vLLM's import 8-10 s of CPU on the fast ones, 12-15 s on the slow ones).

The figure is CPU seconds for a fixed loop, the best of seven (one run varies by ~25 %).
"""

import time


def loop_seconds(n: int = 5_000_000) -> float:
    start = time.process_time()
    total = 0
    for i in range(n):
        total += i
    return time.process_time() - start


if __name__ == "__main__":
    best = min(loop_seconds() for _ in range(7))
    print(f"machine speed: a fixed Python loop took {best:.3f} s of CPU (the runs in "
          "docs/guide/developers.md: 0.085-0.17 s)")
