#!/bin/bash
# GPU machine, detached (issue 12, fourth round): where a step goes with the token carry (py-spy),
# one host-side knob (the GIL switch interval), and 30 minutes of captions with rollover as the
# app runs them. py-spy: the static binary in .gpu/pyspy/ (pip download py-spy), when present.
cd "$(dirname "$0")/../.."
. .gpu/kit/env.sh
P=$PWD/benchmarks W=$VOXCAP_GPU_WORK R=$VOXCAP_GPU_WORK/res M=$VOXCAP_GPU_WORK/rsmodel
export CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_ORDER=PCI_BUS_ID PATH=$PWD/.gpu/pyspy:$PATH
export VLLM_CACHE_ROOT=$W/cc/vllm TORCHINDUCTOR_CACHE_DIR=$W/cc/inductor TRITON_CACHE_DIR=$W/cc/triton
step() { local name=$1 limit=$2; shift 2; ( date +%s.%N; timeout "$limit" "$@"; echo "EXIT $?"; date +%s.%N ) > "$R/$name.log" 2>&1; }
# 1. profile of the engine core and the app, one stream, carry on (compiles the 4-stream config)
step spy 400 python3 -m benchmarks.step_profile --model "$M" --dummy-weights --streams 1 --seconds 60 --spy "$R/spy" --spy-seconds 6 --label carry --out "$R/step_spy.json"
# 2. the GIL switch interval (5 ms by default) in the app and, forked, the engine core
for si in 0.0005 0.005; do
  step "si$si" 200 python3 -c "import sys, runpy; sys.setswitchinterval($si); runpy.run_module('benchmarks.step_profile', run_name='__main__', alter_sys=True)" \
    --model "$M" --dummy-weights --seconds 30 --label "si$si" --out "$R/step_si$si.json"
done
# 3. 30 minutes of speech through build_engine (rollover, default policy), carry on
step long 600 python3 -m benchmarks.long_session --model "$M" --dummy-weights --minutes 30 --out "$R/long_carry.json"
echo done > "$R/all.done"
