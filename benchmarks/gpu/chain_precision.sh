#!/bin/bash
# GPU machine, detached (issue 21): the cards people own, simulated on the H200 by a process that
# holds all but 15.5 / 11.5 / 7.5 GiB: `voxcap transcribe` and the app's engine with default
# settings on each (precision Automatic); then the consumer kernels forced on the full GPU:
# FlashAttention 2 for each precision, FP8 Marlin for both FP8 choices. Results in $R, poll with
#   OUT=$OUT bash benchmarks/gpu/poll_prepare.sh 400
# Launch (after the kit's pieces are stashed): bash benchmarks/gpu/launch_prepare.sh chain_precision.sh
. "$(dirname "$0")/chain_common.sh"
python3 -c "import sys, soundfile as sf; from voxcap.commands.bench import speech_like
sf.write(sys.argv[1], speech_like(30.0), 16000)" "$W/speech30.wav"
for leave in ${CARDS:-15.5 11.5 7.5}; do
  [ "$leave" = none ] && continue
  rm -f /tmp/hog.ready
  python3 "$P/gpu/hog.py" "$leave" /tmp/hog.ready > "$R/hog$leave.log" 2>&1 & hog=$!
  for _ in $(seq 60); do [ -f /tmp/hog.ready ] && break; sleep 1; done
  cat /tmp/hog.ready >> "$R/hog$leave.log"
  # memory while transcribe runs: the peak of the device's used memory, less what the hog holds
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 250 > "$R/smi_t$leave.csv" & smi=$!
  step "transcribe$leave" 300 voxcap transcribe "$W/speech30.wav" --model "$M" --dummy-weights --no-journal -o "$R/t$leave.srt"
  kill $smi
  step "app$leave" 300 python3 -m benchmarks.precision_gpu --model "$M" --dummy-weights --app --seconds ${SECONDS_RUN:-10} --paced ${PACED:-15} \
    --label "app$leave" --log "$R/app$leave.vllm.log" --out "$R/app$leave.json"
  kill $hog; wait $hog 2>/dev/null; sleep 2
done
for cfg in ${KERNELS:-bfloat16:2: fp8:2: fp8_kv:2: fp8:2:m fp8_kv:2:m}; do
  IFS=: read -r prec fa m <<< "$cfg"
  [ "$prec" = skip ] && continue
  name="k_${prec}_fa${fa}${m:+_marlin}"
  step "$name" 300 python3 -m benchmarks.precision_gpu --model "$M" --dummy-weights --precision "$prec" --fa "$fa" \
    ${m:+--marlin} --seconds 10 --label "$name" --log "$R/$name.vllm.log" --out "$R/$name.json"
done
echo done > "$R/all.done"
