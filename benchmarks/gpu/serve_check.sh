#!/bin/bash
# GPU machine, after the GPU kit's install (/work/shared/gpu/README.md: install.sh, then
# `. .gpu/kit/env.sh`); issue 24. `voxcap serve` on the real-shape model with random weights,
# `voxcap transcribe --engine remote --realtime` through it, then the same audio through the
# in-process engine: step and caption-lag figures of both, side by side. About 5 minutes:
#   bash benchmarks/gpu/serve_check.sh [SECONDS_OF_AUDIO=30] [PORT=8000]
# Results in $VOXCAP_GPU_WORK/res/serve_*.log; the figures are printed at the end.
cd "$(dirname "$0")/../.."
. .gpu/kit/env.sh
SECONDS_AUDIO=${1:-30} PORT=${2:-8000}
W=$VOXCAP_GPU_WORK R=$VOXCAP_GPU_WORK/res M=$VOXCAP_GPU_WORK/rsmodel
mkdir -p "$R"
[ -f "$M/params.json" ] || python3 .gpu/kit/make_real_shape_model.py "$M" > "$R/model.log" 2>&1 || { cat "$R/model.log"; exit 3; }
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
# voxcap's own folders for this check: the generated key and vLLM's log land here
export VOXCAP_CONFIG_DIR=$W/serve-config VOXCAP_STATE_DIR=$W/serve-state
AUDIO=$W/serve_speech.wav
python3 - "$AUDIO" "$SECONDS_AUDIO" <<'PY' || exit 4
import sys, soundfile as sf
from voxcap.commands.bench import speech_like
sf.write(sys.argv[1], speech_like(float(sys.argv[2]), seed=1), 16000)
PY
# 1. the server, as a person starts it (loopback, generated key); it dies with this script
voxcap serve --model "$M" --dummy-weights --port "$PORT" > "$R/serve_server.log" 2>&1 &
SERVE=$!
trap 'kill -INT $SERVE 2>/dev/null; wait $SERVE 2>/dev/null' EXIT
t0=$(date +%s)
until grep -q "Ctrl-C stops the server." "$R/serve_server.log"; do
  if ! kill -0 $SERVE 2>/dev/null; then echo "voxcap serve exited:"; tail -20 "$R/serve_server.log"; tail -30 "$VOXCAP_STATE_DIR/vllm-server.log"; exit 5; fi
  if (( $(date +%s) - t0 > 540 )); then echo "voxcap serve not ready in 540 s"; tail -30 "$VOXCAP_STATE_DIR/vllm-server.log"; exit 6; fi
  sleep 2
done
echo "server ready in $(( $(date +%s) - t0 )) s"; grep -E "^Ready:" "$R/serve_server.log"
grep -c "voxcap session fix applied" "$VOXCAP_STATE_DIR/vllm-server.log" | sed 's/^/session fix applied in processes: /'
nvidia-smi --query-gpu=memory.used,memory.total --format=csv,noheader | sed 's/^/GPU memory with the server: /'
# 2. the app's remote engine through it, paced like a live source
timeout 300 voxcap transcribe "$AUDIO" --engine remote --server "ws://127.0.0.1:$PORT" \
  --api-key-file "$VOXCAP_CONFIG_DIR/serve-api-key" --realtime --no-journal > "$R/serve_remote.log" 2>&1
echo "remote EXIT $?" >> "$R/serve_remote.log"
# 3. kill -9 of `voxcap serve`: its server, and the engine core the server forked on the GPU
#    (tied by the plugin's at-fork hook), must go by themselves (Ctrl-C is tested on the CPU build)
kids=$(pgrep -P $SERVE | tr '\n' ' ')
kill -9 $SERVE; wait $SERVE 2>/dev/null; trap - EXIT
sleep 5; left=$(pgrep -f "vllm.entrypoints.openai.api_server|VLLM::EngineCore|VLLM::Worker" | tr '\n' ' ')
echo "processes left 5 s after kill -9 of voxcap serve (its children were: $kids): ${left:-none}"
[ -n "$left" ] && { ps -o pid,ppid,pgid,cmd -p "$(echo $left | tr " " ",")" | cut -c1-120; kill -9 $left; sleep 3; }
# 4. the same audio through the in-process engine, for comparison
timeout 400 voxcap transcribe "$AUDIO" --model "$M" --dummy-weights --realtime --no-journal > "$R/serve_local.log" 2>&1
echo "local EXIT $?" >> "$R/serve_local.log"
echo "--- figures ($SECONDS_AUDIO s of audio, real time, 1 stream)"
for k in remote local; do echo "$k: $(grep -E '^done:|caption lag' "$R/serve_$k.log" | tr '\n' ' ') $(grep EXIT "$R/serve_$k.log")"; done
