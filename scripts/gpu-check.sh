#!/usr/bin/env bash
# On a machine with an NVIDIA GPU, compare what voxcap reports (`voxcap doctor --json`, and the
# figures the GUI's meter reads through voxcap/gpu.py) with nvidia-smi. Installs nothing: run it
# from the repository root with any python3 (PyTorch there is used if present; nvidia-ml-py too).
#
#   scripts/gpu-check.sh            # prints everything; the exit code is nvidia-smi's, not doctor's
#   PYTHON=python3.12 scripts/gpu-check.sh
#
# NVML is read both ways voxcap can (nvidia-ml-py when installed, and ctypes on
# libnvidia-ml.so.1, which voxcap uses when nvidia-ml-py is missing); both must agree with each
# other and with nvidia-smi.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
export PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH}
# voxcap's folders go to a temporary place: nothing is written in this user's home
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export VOXCAP_CONFIG_DIR="$tmp/config" VOXCAP_DATA_DIR="$tmp/data" VOXCAP_CACHE_DIR="$tmp/cache"

section() { printf '\n===== %s =====\n' "$1"; }

section "machine"
"$PY" - <<'EOF'
import importlib.util, platform, sys
print("python", sys.version.split()[0], sys.executable, platform.platform())
for mod in ("numpy", "torch", "pynvml", "vllm", "platformdirs", "soundfile", "soxr", "pulsectl",
            "sounddevice", "PySide6"):
    print(f"  {mod}: {'present' if importlib.util.find_spec(mod) else 'missing'}")
EOF

section "nvidia-smi"
nvidia-smi --query-gpu=index,name,memory.total,memory.used,memory.free,memory.reserved,utilization.gpu,compute_cap,driver_version --format=csv
smi=$?
nvidia-smi --query-gpu=name,memory.total,memory.used,utilization.gpu,compute_cap --format=csv,noheader,nounits
nvidia-smi | head -n 4 | tail -n 2  # the "CUDA Version" the driver supports

section "voxcap doctor --json"
"$PY" -m voxcap.cli doctor --json
echo "(doctor exit code $?: 1 is expected here, vLLM and the model are not installed)"

section "voxcap doctor --json, NVML through ctypes: the GPU checks only"
VOXCAP_NVML=ctypes "$PY" -m voxcap.cli doctor --json | "$PY" -c '
import json, sys
report = json.load(sys.stdin)
print(json.dumps([c for c in report["checks"] if c["id"] in ("gpu", "gpu_memory")], indent=2))'

section "voxcap doctor (text)"
"$PY" -m voxcap.cli doctor

section "what the GUI's meter reads (voxcap.gpu), both NVML paths, and PyTorch"
for backend in pynvml ctypes; do
  VOXCAP_NVML=$backend "$PY" - <<'EOF'
import os
from voxcap import gpu
print(f"[{os.environ['VOXCAP_NVML']}] backend={gpu.nvml_backend()} reason={gpu.nvml_unavailable_reason()!r}")
print("  driver:", gpu.driver_versions())
for g in gpu.list_gpus() or []:
    print(f"  GPU {g.index}: {g.name} | total {g.memory_total_bytes / 2**20:.0f} MiB | used "
          f"{g.memory_used_bytes / 2**20:.0f} MiB | free "
          f"{'n/a' if g.memory_free_bytes is None else f'{g.memory_free_bytes / 2**20:.0f} MiB'} | "
          f"reserved {g.memory_reserved_bytes / 2**20:.0f} MiB | load {g.load_pct} % | "
          f"cc {g.compute_capability_text}")
EOF
done
"$PY" - <<'EOF'
try:
    import torch
except Exception as exc:
    print("torch: not importable:", exc)
else:
    print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())
    for i in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(i)
        free, total = torch.cuda.mem_get_info(i)
        print(f"  cuda:{i} {p.name} | total {p.total_memory / 2**20:.0f} MiB | mem_get_info free "
              f"{free / 2**20:.0f} of {total / 2**20:.0f} MiB | cc {p.major}.{p.minor}")
EOF

section "nvidia-smi again (load and memory move; compare with the readings above)"
nvidia-smi --query-gpu=name,memory.total,memory.used,utilization.gpu,compute_cap --format=csv
exit $smi
