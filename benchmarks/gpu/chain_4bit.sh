#!/bin/bash
# GPU machine, detached (issue 29): the 4-bit tier (vLLM's online quantization="mxfp4") on the
# cards of the issue, each simulated by hog.py holding all but N GiB of the H200, voxcap with
# default settings (precision Automatic); every run samples NVML every 100 ms (start-up peak and
# the running figure) and keeps vLLM's log (kernel, graph mode, weights, graph memory).
#   T1  6.3 GiB free (an 8 GB card during a call): the app's engine, 2 streams asked
#   T2  5.0 GiB free (a 6 GB card): `voxcap transcribe` (1 stream); if voxcap refuses, the same
#       engine forced past voxcap's gate (--force) to see whether vLLM would have started
#   T3  7.0 GiB free, an RTX 20 forced: float16, TRITON_ATTN, voxcap's choice told 7.5 (run with
#       the code before d5e067f, Automatic picked 4-bit there and vLLM failed in Marlin's FP4
#       kernel; voxcap now refuses 4-bit below 8.0, so this shows the refusal)
#   L1  the whole GPU: 4-bit + FP8 KV, 1 stream, without torch.compile (a memory lever)
#   L2  the same with torch.compile, cold caches, its compile in one process
#       (TORCHINDUCTOR_COMPILE_THREADS=1): whether the cold start's peak is the compile workers
#   B   the whole GPU: the breakdown of FP8 + FP8 KV and bfloat16 for comparison
# T1 also lists the processes holding GPU memory every 0.5 s ($R/apps_t1.log).
# WANT="t1 t2 t3 l1 l2 b" (default: all) picks the parts. Run it from a copy of the checkout on the
# machine ($VOXCAP_GPU_WORK/repo): each later call re-sends the working tree, and a run that
# imports from it while it is being replaced fails (seen: "No module named voxcap.engine.inprocess").
# Launch after the kit's pieces are stashed:  bash benchmarks/gpu/launch_prepare.sh chain_4bit.sh
# Poll back to back:                          OUT=$OUT bash benchmarks/gpu/poll_prepare.sh 500
. "$(dirname "$0")/chain_common.sh"
python3 -c "import sys, soundfile as sf; from voxcap.commands.bench import speech_like
sf.write(sys.argv[1], speech_like(30.0), 16000)" "$W/speech30.wav"
python3 - > "$R/context.log" 2>&1 <<'PY'
import torch
from voxcap.commands.bench import gpu_used_bytes
before = gpu_used_bytes(); torch.zeros(1, device="cuda"); torch.cuda.synchronize()
print(f"RESULT cuda context {(gpu_used_bytes() - before) / 2**20:.0f} MiB (NVML, torch {torch.__version__})")
PY
hog_on() {
  rm -f /tmp/hog.ready
  python3 "$P/gpu/hog.py" "$1" /tmp/hog.ready > "$R/hog$1.log" 2>&1 & hog=$!
  for _ in $(seq 60); do [ -f /tmp/hog.ready ] && break; sleep 1; done
  cat /tmp/hog.ready >> "$R/hog$1.log"
}
hog_off() { kill $hog; wait $hog 2>/dev/null; sleep 2; }
want() { [[ " ${WANT:-t1 t2 t3 l1 l2 b} " == *" $1 "* ]]; }
pg() {  # NAME LIMIT ARGS...: one engine through precision_gpu.py
  local name=$1 limit=$2; shift 2
  step "$name" "$limit" python3 -m benchmarks.precision_gpu --model "$M" --dummy-weights --label "$name" \
    --log "$R/$name.vllm.log" --out "$R/$name.json" --trace "$R/$name.trace.csv" "$@"
}
if want t1; then
hog_on 6.3
( while :; do date +%T.%N; nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader; sleep 0.5; done ) > "$R/apps_t1.log" 2>&1 & apps=$!
pg t1_app6.3 ${T1LIMIT:-330} --app --seconds 6 --paced 15
kill $apps
hog_off
fi
if want t2; then
hog_on 5.0
nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 > "$R/smi_t2.csv" & smi=$!
step t2_transcribe5.0 240 voxcap transcribe "$W/speech30.wav" --model "$M" --dummy-weights --no-journal -o "$R/t2.srt"
kill $smi
grep -q "EXIT 0" "$R/t2_transcribe5.0.log" || pg t2_forced5.0 240 --precision mxfp4_kv --max-streams 1 --force --seconds 6
hog_off
fi
if want t3; then
hog_on 7.0
pg t3_turing7.0 ${T3LIMIT:-330} --app --turing --seconds 6 --paced 15
hog_off
fi
want l1 && pg l1_nocompile ${LLIMIT:-240} --precision mxfp4_kv --max-streams 1 --compile-off --seconds 6
C2=$W/cc-l2; rm -rf "$C2"
want l2 && VLLM_CACHE_ROOT=$C2/vllm TORCHINDUCTOR_CACHE_DIR=$C2/inductor TRITON_CACHE_DIR=$C2/triton TORCHINDUCTOR_COMPILE_THREADS=1 \
  pg l2_onethread ${LLIMIT:-240} --precision mxfp4_kv --max-streams 1 --seconds 6
want b && for p in ${BREAKDOWN-fp8_kv bfloat16}; do pg "b_$p" 240 --precision "$p" --max-streams 1 --seconds 6; done
echo done > "$R/all.done"
