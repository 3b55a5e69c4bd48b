"""GPU machine: simulate a smaller card. Holds all but LEAVE_GIB of the GPU's free memory
(one allocation, after this process's own CUDA context), writes READY_FILE, sleeps until killed.
    python3 benchmarks/gpu/hog.py 11.5 /tmp/hog.ready &"""
import sys
import time
from pathlib import Path

import torch

leave = int(float(sys.argv[1]) * 2**30)
free, total = torch.cuda.mem_get_info()
held = torch.empty(max(free - leave, 0), dtype=torch.uint8, device="cuda")
free_after, _ = torch.cuda.mem_get_info()
Path(sys.argv[2]).write_text(f"held {held.numel() / 2**30:.2f} GiB, free {free_after / 2**30:.2f} "
                             f"GiB of {total / 2**30:.1f}\n")
while True:
    time.sleep(60)
