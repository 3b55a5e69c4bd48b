#!/bin/bash
# GPU machine, detached (issue 12, third and fourth rounds): the preparation before the first
# start, then the token carry's step time (A/B in one lease) and its tokens against the echo.
cd "$(dirname "$0")/../.."
. .gpu/kit/env.sh
P=$PWD/benchmarks W=$VOXCAP_GPU_WORK R=$VOXCAP_GPU_WORK/res M=$VOXCAP_GPU_WORK/rsmodel
export CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_ORDER=PCI_BUS_ID
step() { local name=$1 limit=$2; shift 2; ( date +%s.%N; timeout "$limit" "$@"; echo "EXIT $?"; date +%s.%N ) > "$R/$name.log" 2>&1; }
CR=$W/cc  # the caches a user's install would have: VLLM_CACHE_ROOT, inductor, triton
export VLLM_CACHE_ROOT=$CR/vllm TORCHINDUCTOR_CACHE_DIR=$CR/inductor TRITON_CACHE_DIR=$CR/triton
# 1. what the installer runs (model-class inspection cached)
step info 200 voxcap prepare
# 2. the key on the CUDA build: real settings with a weights file (bf16 header) == prepared, no file
python3 - "$M" > "$R/key.log" 2>&1 <<'PY'
import json, struct, sys
from pathlib import Path
from voxcap.engine.settings import InProcessSettings
from voxcap.engine.inprocess.prepare import vllm_config_hash, prepared_settings
m = Path(sys.argv[1]); w = m / "consolidated.safetensors"
s = InProcessSettings(str(m), max_streams=2).validated()
prep = vllm_config_hash(prepared_settings(s), "cuda")
header = json.dumps({"tok_embeddings.weight": {"dtype": "BF16", "shape": [2, 2], "data_offsets": [0, 8]}}).encode()
w.write_bytes(struct.pack("<Q", len(header)) + header + bytes(8))
real = vllm_config_hash(s, "cuda")
w.unlink()
print("RESULT key prepared", prep, "real", real, "same", prep == real)
PY
echo "EXIT $?" >> "$R/key.log"
# 3. preparing the engine (what runs during the download): its wall time is a cold start's
#    with the inspection cached
step prepare 600 voxcap prepare --model "$M"
# 4. the first real start after it (warm?), stage by stage
step warm 400 python3 -m benchmarks.startup_profile --model "$M" --dummy-weights --graph-mode FULL_DECODE_ONLY --runs warm --cache-root "$CR" --out "$R/startup_after_prepare.json"
# 4b. step time with the token carry (voxcap's default now) and without: engine for 4 streams
step stepcarry 420 python3 -m benchmarks.step_profile --model "$M" --dummy-weights --seconds 30 --label carry --out "$R/step_carry.json"
VOXCAP_VLLM_TOKEN_CARRY=0 step stepecho 300 python3 -m benchmarks.step_profile --model "$M" --dummy-weights --seconds 30 --label echo --out "$R/step_echo.json"
# 4c. the carry's tokens against the echo's on the real shape (bare vLLM loop, one stream)
step growth 560 python3 -m benchmarks.step_growth --model "$M" --dummy-weights --duration 40 --bucket 100 --variants on,carry --out "$R/growth_carry.json"
# 5. graph-mode switches in one app process (the settings panel)
step restart 900 python3 -m benchmarks.engine_restart --model "$M" --dummy-weights --modes FULL_DECODE_ONLY,PIECEWISE,FULL_DECODE_ONLY --out "$R/restart.json"
# 6. a cold start with nothing cached, same lease (the comparison)
step cold 600 python3 -m benchmarks.startup_profile --model "$M" --dummy-weights --graph-mode FULL_DECODE_ONLY --runs cold --cache-root "$W/cc-cold" --out "$R/startup_cold.json"
echo done > "$R/all.done"
