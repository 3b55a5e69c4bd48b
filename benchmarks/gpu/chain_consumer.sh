#!/bin/bash
# GPU machine, detached (issues 21 and 24): the consumer cards' kernels forced on the H200, one
# engine each (precision_gpu.py), in order of what is least known; `voxcap serve` with the app's
# remote engine connected (serve_check.sh); the WER benchmark's plumbing (precision_wer.py, random
# weights, espeak-ng audio made beforehand: .gpu/wer/audio, jiwer's wheels in .gpu/wer/wheels).
# Config PREC:FA:MARLIN:TURING; TURING = float16 + TRITON_ATTN (what an RTX 20 runs).
# Launch after the kit's pieces are stashed:  bash benchmarks/gpu/launch_prepare.sh chain_consumer.sh
# KLIMIT: seconds per kernel run (300); KERNELS_B= (empty) skips the second list; STARTUP=1 adds
# a warm start-up profile and the processes left after it.
# Poll back to back:                          OUT=$OUT bash benchmarks/gpu/poll_prepare.sh 500
. "$(dirname "$0")/chain_common.sh"
kernel() {
  IFS=: read -r prec fa m t <<< "$1"
  local name="k_${prec}${fa:+_fa$fa}${m:+_marlin}${t:+_turing}"
  step "$name" "${KLIMIT:-300}" python3 -m benchmarks.precision_gpu --model "$M" --dummy-weights --precision "$prec" \
    ${fa:+--fa $fa} ${m:+--marlin} ${t:+--turing} --seconds ${SECONDS_RUN:-6} --label "$name" \
    --log "$R/$name.vllm.log" --out "$R/$name.json"
}
for cfg in ${KERNELS_A:-fp8_kv:2:: bfloat16:2:: fp8:2:m:}; do kernel "$cfg"; done
[ -n "${NO_SERVE:-}" ] || step serve_check 600 bash "$P/gpu/serve_check.sh" 20
for cfg in ${KERNELS_B-bfloat16:::t fp8::m:t fp8:2:: fp8_kv:2:m: fp8_kv::m:t}; do kernel "$cfg"; done
if [ -z "${NO_WER:-}" ]; then
  python3 -m pip install -q --no-index --find-links .gpu/wer/wheels jiwer > "$R/jiwer.log" 2>&1
  step wer 400 python3 -m benchmarks.precision_wer --model "$M" --dummy-weights --audio .gpu/wer/audio \
    --precisions bfloat16,fp8 --out "$R/wer.json"
fi
if [ -n "${STARTUP:-}" ]; then  # the at-fork stdin guard on the GPU path: start-up as before, nothing left
  step startup 400 python3 -m benchmarks.startup_profile --model "$M" --dummy-weights --runs warm --cache-root "$W/cc" \
    --out "$R/startup.json"
  nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv > "$R/after_startup.log" 2>&1
  ps -eo pid,args | grep -c "[V]LLM::EngineCore" >> "$R/after_startup.log"
fi
echo done > "$R/all.done"
