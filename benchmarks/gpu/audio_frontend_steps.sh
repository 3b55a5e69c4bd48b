#!/bin/bash
# The batched, CUDA-graphed audio front end (voxcap/engine/vllm_adapter/audio_frontend.py)
# against vLLM's per-session path on the GPU machine, alone and through the app's engine
# (benchmarks/frontend_steps.py). ~6-8 minutes with the engine starts; run detached:
#   setsid nohup bash benchmarks/gpu/audio_frontend_steps.sh OUT > /dev/null 2>&1 < /dev/null &
# then watch OUT/progress (each part writes its JSON and logs as it ends; OUT/done at the end).
#  (d) the front end alone (benchmarks/frontend_micro.py, no engine): a step's wall time for 1-128
#      sessions at the real width in bfloat16, vLLM's per-session path vs batched vs CUDA graph
#  (a) tokens: the tiny model with seeded random weights (its tokens follow the audio), 1 and 4
#      streams, "off" vs "check" (front end on, every batched item also computed by vLLM's path
#      inside the engine and compared: counts of differing items, max abs diff)
#  (b) the real-shape model (dummy weights), 1 and 2 streams paced in real time, "off" vs "on":
#      step p50/p95, the engine's CPU share of a core while captioning one stream
#  (c) whether graphs were captured and replayed: frontend_counts in each JSON (graphs_captured,
#      graph_replays, capture_failures) and vLLM's log lines ("voxcap audio front end ...") in
#      OUT/logs-*/<variant>.log, gathered in OUT/c_frontend_log_lines.txt after every part
# env: PARTS (which of d, a, b and in what order; default "d b a"), SECONDS_B (audio per stream
#      in (b), default 12), MARK_DONE (0: leave OUT/done to a calling script)
OUT=$(mkdir -p "${1:?usage: audio_frontend_steps.sh OUT_DIR}" && cd "$1" && pwd)
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
. .gpu/kit/env.sh
W=$VOXCAP_GPU_WORK M=$VOXCAP_GPU_WORK/rsmodel
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0} PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
export VLLM_CACHE_ROOT=$W/cc/vllm TORCHINDUCTOR_CACHE_DIR=$W/cc/inductor TRITON_CACHE_DIR=$W/cc/triton
say() { echo "$(date +%T) $*" >> "$OUT/progress"; }
rm -f "$OUT/done"
[ -f "$M/tekken.json" ] || python3 .gpu/kit/make_real_shape_model.py "$M" > "$OUT/model.log" 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv > "$OUT/gpu.csv" 2>&1

for part in ${PARTS:-d b a}; do
  case $part in
  d)
    say "(d) the front end alone, real width, bf16: vLLM per session vs batched vs CUDA graph"
    timeout 120 python3 -m benchmarks.frontend_micro --device cuda --dtype bfloat16 --widths 1280 \
      --sessions 1,2,8,48,128 --repeats 100 --out "$OUT/d_micro.json" > "$OUT/d_micro.txt" 2>&1
    say "(d) exit $?" ;;
  b)
    say "(b) real shape, off vs on, 1 and 2 streams paced"
    timeout 420 python3 -m benchmarks.frontend_steps --model "$M" --dummy-weights --variants off,on \
      --streams 1,2 --seconds "${SECONDS_B:-12}" --max-streams 2 --logs "$OUT/logs-b" \
      --out "$OUT/b_real_shape.json" > "$OUT/b_real_shape.txt" 2>&1
    say "(b) exit $?" ;;
  a)
    python3 -c "from voxcap.engine.model.tiny import write_tiny_model as w; w('$W/tiny37', max_len=4096, weights_seed=0)" \
      > "$OUT/tiny.log" 2>&1
    say "(a) tiny seeded weights, off vs check, 1 and 4 streams"
    timeout 240 python3 -m benchmarks.frontend_steps --model "$W/tiny37" --variants off,check \
      --streams 1,4 --seconds 6 --max-streams 4 --logs "$OUT/logs-a" \
      --out "$OUT/a_tokens.json" > "$OUT/a_tokens.txt" 2>&1
    say "(a) exit $?" ;;
  *) say "unknown part '$part' (use d, a, b)" ;;
  esac
  grep -h "voxcap audio front end\|voxcap batched audio front end" "$OUT"/logs-*/*.log \
    > "$OUT/c_frontend_log_lines.txt" 2>/dev/null
done
say "parts done: ${PARTS:-d b a}"
[ "${MARK_DONE:-1}" = 0 ] || echo done > "$OUT/done"
