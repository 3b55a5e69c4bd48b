"""An engine core's py-spy profile (raw collapsed stacks, .txt or .gz) in the categories of
docs/perf/engine-core-per-chunk.md: the per-chunk request cycle a resident session would remove,
the input thread's socket work, the scheduler, the runner's parts, the output thread.

    python3 benchmarks/gpu/engine_core_categories.py PROFILE [PROFILE ...]
"""

from __future__ import annotations

import collections
import gzip
import sys

# first category (in this order) with a frame of the stack in it takes the stack's samples
CATEGORIES = [
    ("request cycle: msgpack decode (input thread)", ["MsgpackDecoder.decode"]),
    ("request cycle: Request build (input thread)",
     ["Request.from_engine_core_request", "EngineCore.preprocess_add_request"]),
    ("request cycle: scheduler add / session update", ["EngineCore.add_request"]),
    ("request cycle: NewRequestData", ["NewRequestData.from_request"]),
    ("request cycle: runner remove + re-add (V2 add_requests)", ["GPUModelRunner.add_requests"]),
    ("request cycle: runner remove + re-add (V1 _update_streaming_request)",
     ["GPUModelRunner._update_streaming_request"]),
    ("input thread: ZMQ poll / receive", ["EngineCoreProc.process_input_sockets"]),
    ("scheduler: schedule (rest)", ["Scheduler.schedule"]),
    ("scheduler: update_from_output", ["Scheduler.update_from_output"]),
    ("runner: gather mm embeddings", ["EncoderRunner.gather_mm_embeddings",
                                      "GPUModelRunner._gather_mm_embeddings"]),
    ("runner: audio front end / encoder", ["ModelState.execute_mm_encoder",
                                           "GPUModelRunner._execute_mm_encoder"]),
    ("runner: model forward", ["VoxtralRealtimeGeneration.forward",
                               "_support_torch_compile.<locals>.__call__"]),
    ("runner: sampling", ["UniProcExecutor.sample_tokens", "GPUModelRunner._sample"]),
    ("runner: inputs, attention metadata, staged writes (rest)", ["GPUModelRunner.execute_model"]),
    ("output thread", ["EngineCoreProc.process_output_sockets"]),
]


def categories(path: str) -> tuple[int, collections.Counter]:
    shares: collections.Counter = collections.Counter()
    total = 0
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", errors="replace") as f:
        for line in f:
            stack, _, count = line.rstrip().rpartition(" ")
            if not stack or not count.isdigit():
                continue
            n = int(count)
            total += n
            names = {frame.split(" (")[0] for frame in stack.split(";")}
            label = next((lab for lab, keys in CATEGORIES if names.intersection(keys)), "other")
            shares[label] += n
    return total, shares


def main() -> int:
    for path in sys.argv[1:]:
        total, shares = categories(path)
        print(f"{path}: {total} samples")
        for label in [lab for lab, _ in CATEGORIES] + ["other"]:
            print(f"  {100 * shares[label] / max(total, 1):5.1f} %  {label}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
