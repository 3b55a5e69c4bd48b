#!/bin/bash
# Issue 49: where the engine core's host CPU per stream-step goes on the H200, and whether a
# second engine core on the same GPU takes 128 sessions (docs/perf/engine-core-per-chunk.md).
# Real shape, random weights, vLLM 0.32.0, voxcap serve with the token carry through /v1/realtime
# (as the issue's "carry on" column), N = 64, 96, 128, one repeat each, ~10 s of speech a session.
#   chunk    benchmarks/engine_core_chunk.py on this host's CPU: the per-chunk request work
#            (msgpack decode, Request, session update, NewRequestData) in µs, no engine (~1 min)
#   one      one engine core (before): N = 64, 96, 128; then a py-spy of every server process at
#            N = 128, all threads as py-spy sees them (the issue's profile)
#   onegil   the same server, N = 64, then a py-spy at N = 128 of only the thread holding the GIL
#            (--profile-gil): input thread's share here against "one" = its work, not its waits
#   dp2      two engine cores on the one GPU (after), each sized for half the sessions: N = 64,
#            96, 128 (vLLM's data parallel with the GPU named twice: never run before)
# Each part has a time limit and is skipped past BUDGET_S (default 900 s). Needs the GPU kit
# (.gpu/kit) and py-spy's wheel in .gpu/pyspy/. Run detached:
#   setsid nohup bash benchmarks/gpu/engine_core_host.sh OUT > /dev/null 2>&1 < /dev/null &
# then watch OUT/progress; OUT/done at the end. Read: OUT/chunk.txt; OUT/one.txt and OUT/dp2.txt
# (p50/p95, sessions behind, "CPU ms per stream-step" of the engine core = the issue's target,
# <= 0.3 at 128); the profiles' shares with docs/perf/engine-core-per-chunk.md's categories:
#   python3 benchmarks/gpu/engine_core_categories.py OUT/profiles/*engine_core*.txt
# env: SESSIONS (64,96,128), SECONDS_EACH (10), MAX_LEN (512), BUDGET_S (900), AUDIO; for a dry
#      run on vLLM's CPU build: MODEL (a tiny model folder), GRAPHS=--eager, SESSIONS=2,4
OUT=$(mkdir -p "${1:?usage: engine_core_host.sh OUT_DIR}" && cd "$1" && pwd)
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
[ -f .gpu/kit/env.sh ] && . .gpu/kit/env.sh
W=${VOXCAP_GPU_WORK:-$OUT/work} M=${MODEL:-${VOXCAP_GPU_WORK:-$OUT/work}/rsmodel}
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0} PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
export VLLM_CACHE_ROOT=$W/cc/vllm TORCHINDUCTOR_CACHE_DIR=$W/cc/inductor TRITON_CACHE_DIR=$W/cc/triton
SESSIONS=${SESSIONS:-64,96,128} SECONDS_EACH=${SECONDS_EACH:-10} MAX_LEN=${MAX_LEN:-512}
BUDGET_S=${BUDGET_S:-900} T0=$(date +%s) LARGEST=${SESSIONS##*,} SMALLEST=${SESSIONS%%,*}
AUDIO=$(realpath "${AUDIO:-benchmarks/audio/speech16k.flac}")
PY=${PYTHON:-python3}
say() { echo "$(date +%T) +$(( $(date +%s) - T0 ))s $*" >> "$OUT/progress"; }
rm -f "$OUT/done"

[ -f "$M/tekken.json" ] || $PY .gpu/kit/make_real_shape_model.py "$M" > "$OUT/model.log" 2>&1
command -v py-spy > /dev/null || $PY -m pip install -q --no-index --no-deps .gpu/pyspy/*.whl \
  > "$OUT/pyspy-install.log" 2>&1
say "py-spy: $(command -v py-spy || echo missing); CPU: $(grep -m1 'model name' /proc/cpuinfo)"

say "chunk start"
timeout 300 $PY -m benchmarks.engine_core_chunk --sessions "$SESSIONS" --out "$OUT/chunk.json" \
  > "$OUT/chunk.txt" 2>&1
say "chunk exit $?"

gpu_idle() {  # until the previous part's server has left the GPU
  command -v nvidia-smi > /dev/null || return
  for i in $(seq 75); do
    used=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0 2>/dev/null)
    [ "${used:-0}" -lt 2048 ] && return
    sleep 1
  done
  say "GPU still holds ${used} MiB"
}

# part NAME LIMIT_S SESSIONS "SERVER SPEC" [capacity.py options...]
part() {
  local name=$1 limit=$2 sessions=$3 spec=$4; shift 4
  if [ $(( $(date +%s) - T0 + limit )) -gt "$BUDGET_S" ]; then
    say "$name skipped: $limit s would end past the budget ($BUDGET_S s)"; return
  fi
  gpu_idle
  say "$name start (limit $limit s)"
  timeout -s INT -k 30 "$limit" $PY -m benchmarks.capacity --model "$M" --dummy-weights ${GRAPHS:---no-eager} \
    --sessions "$sessions" --seconds "$SECONDS_EACH" --audio "$AUDIO" --repeats 1 --drain 15 \
    --stop-p95-ms 3000 --max-streams "$LARGEST" --start-timeout 240 --servers "" --server "$spec" "$@" \
    --out "$OUT/$name.json" > "$OUT/$name.txt" 2>&1
  say "$name exit $?"
}

VOX="serve:--max-model-len=$MAX_LEN VOXCAP_VLLM_REALTIME_CARRY=1"
part one 260 "$SESSIONS" "one=voxcap $VOX" --profile "$LARGEST" --profile-dir "$OUT/profiles"
part onegil 180 "$SMALLEST" "onegil=voxcap $VOX" --profile "$LARGEST" --profile-gil \
  --profile-dir "$OUT/profiles"
part dp2 260 "$SESSIONS" \
  "dp2=voxcap $VOX serve:--gpus=2 CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES%%,*},${CUDA_VISIBLE_DEVICES%%,*}" \
  --max-streams $(( LARGEST / 2 ))
for f in "$OUT"/profiles/*engine_core*.txt; do
  [ -f "$f" ] && $PY benchmarks/gpu/engine_core_categories.py "$f" >> "$OUT/categories.txt" 2>&1
done
say "done"
echo done > "$OUT/done"
