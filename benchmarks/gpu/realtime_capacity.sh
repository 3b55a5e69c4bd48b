#!/bin/bash
# How many real-time sessions one H200 keeps, with benchmarks/capacity.py (real shape, random
# weights; N websocket sessions on /v1/realtime, ~10 s of speech each, one 80 ms block every
# 80 ms; the speech is benchmarks/audio/speech16k.flac, read in Python: the GPU machine has no
# espeak-ng or sox), one server at a time (each sized for most of the GPU's memory), at
# N = 32, 64, 96, 128, one repeat:
#   now     voxcap serve as it is (token carry through /v1/realtime, batched audio front end,
#           --max-streams 128, its API-server count: one per 24 streams, 6 here), then a py-spy of
#           its processes at N = 128 (~13 s)
#   before  the same with the carry through /v1/realtime and the batched front end off
#           (VOXCAP_VLLM_REALTIME_CARRY=0, VOXCAP_VLLM_BATCHED_FRONTEND=0)
#   vllm    vLLM's own server, its defaults
#   now1    voxcap serve as "now" with one API server, if the budget leaves time for it
#   dp2     (DP2=1 only) two engine cores on the one GPU, each for half the sessions
# Each part has its own time limit (a part that hangs is killed and the next still runs) and is
# skipped when it would end past BUDGET_S (default 740 s from the start). ~10-12 minutes with the
# four server starts. Needs the GPU kit installed (.gpu/kit) and py-spy's wheel in .gpu/pyspy/.
# Run detached:
#   setsid nohup bash benchmarks/gpu/realtime_capacity.sh OUT > /dev/null 2>&1 < /dev/null &
# then watch OUT/progress (each part writes OUT/<part>.json and .txt as it ends; OUT/done at the end).
# env: SESSIONS (default 32,64,96,128), SECONDS_EACH (10), MAX_LEN (voxcap serve's
#      --max-model-len, default 512: a 10 s session is ~180 tokens; bfloat16 then fits ~200
#      streams on an H200, see `voxcap doctor`), BUDGET_S (740), AUDIO (the speech file, from
#      the repository's root); for a dry run of the plumbing on vLLM's CPU build: MODEL (a tiny
#      model folder), GRAPHS=--eager, a small SESSIONS
OUT=$(mkdir -p "${1:?usage: realtime_capacity.sh OUT_DIR}" && cd "$1" && pwd)
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
. .gpu/kit/env.sh
W=$VOXCAP_GPU_WORK M=${MODEL:-$VOXCAP_GPU_WORK/rsmodel}
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0} PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
export VLLM_CACHE_ROOT=$W/cc/vllm TORCHINDUCTOR_CACHE_DIR=$W/cc/inductor TRITON_CACHE_DIR=$W/cc/triton
SESSIONS=${SESSIONS:-32,64,96,128} SECONDS_EACH=${SECONDS_EACH:-10} MAX_LEN=${MAX_LEN:-512}
BUDGET_S=${BUDGET_S:-740} T0=$(date +%s) LARGEST=${SESSIONS##*,}
AUDIO=$(realpath "${AUDIO:-benchmarks/audio/speech16k.flac}")
say() { echo "$(date +%T) +$(( $(date +%s) - T0 ))s $*" >> "$OUT/progress"; }
rm -f "$OUT/done"

[ -f "$M/tekken.json" ] || python3 .gpu/kit/make_real_shape_model.py "$M" > "$OUT/model.log" 2>&1
command -v py-spy > /dev/null || python3 -m pip install -q --no-index --no-deps .gpu/pyspy/*.whl \
  > "$OUT/pyspy-install.log" 2>&1
say "py-spy: $(command -v py-spy || echo missing)"
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv > "$OUT/gpu.csv" 2>&1
python3 -m voxcap.cli doctor --json > "$OUT/doctor.json" 2> "$OUT/doctor.err"

gpu_idle() {  # until the previous part's server has left the GPU; after 60 s its processes go
  for i in $(seq 75); do
    used=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0 2>/dev/null)
    [ "${used:-0}" -lt 2048 ] && return
    if [ "$i" = 60 ]; then
      left=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader -i 0 2>/dev/null | xargs)
      say "GPU still holds ${used} MiB after 60 s: killing what holds it ($left)"
      [ -n "$left" ] && kill -9 $left 2>/dev/null
    fi
    sleep 1
  done
  say "GPU still holds ${used} MiB"
}

# part NAME LIMIT_S "SERVER SPEC" [capacity.py options...]
part() {
  local name=$1 limit=$2 spec=$3; shift 3
  if [ $(( $(date +%s) - T0 + limit )) -gt "$BUDGET_S" ]; then
    say "$name skipped: $limit s would end past the budget ($BUDGET_S s)"; return
  fi
  gpu_idle
  say "$name start (limit $limit s)"
  # SIGINT at the limit: capacity.py then stops its servers (its finally), SIGKILL 30 s later
  timeout -s INT -k 30 "$limit" python3 -m benchmarks.capacity --model "$M" --dummy-weights ${GRAPHS:---no-eager} \
    --sessions "$SESSIONS" --seconds "$SECONDS_EACH" --audio "$AUDIO" --repeats 1 --drain 15 --stop-p95-ms 1000 \
    --max-streams "$LARGEST" --start-timeout 240 --servers "" --server "$spec" "$@" \
    --out "$OUT/$name.json" > "$OUT/$name.txt" 2>&1
  say "$name exit $?"
}

VOX="serve:--max-model-len=$MAX_LEN"
part now 250 "now=voxcap $VOX VOXCAP_VLLM_REALTIME_CARRY=1" --profile "$LARGEST" --profile-dir "$OUT/profiles"
part before 200 "before=voxcap $VOX VOXCAP_VLLM_REALTIME_CARRY=0 VOXCAP_VLLM_BATCHED_FRONTEND=0"
part vllm 280 "vllm=vllm" --start-timeout 200  # its own compile and ~70 graph sizes, cold
part now1 200 "now1=voxcap $VOX serve:--api-servers=1"
# two engine cores on the one GPU through vLLM's data parallel (CUDA_VISIBLE_DEVICES naming it
# twice; each engine sized for half the sessions): only with DP2=1, budget permitting
[ "${DP2:-0}" = 1 ] && part dp2 220 \
  "dp2=voxcap $VOX serve:--gpus=2 CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES%%,*},${CUDA_VISIBLE_DEVICES%%,*}" \
  --max-streams $(( LARGEST / 2 ))
gpu_idle
# which of voxcap's fixes each server applied, and when the front end captured its graphs (a
# capture inside a run's first seconds adds to its start wave), from vLLM's logs in capacity.py's
# work folders
for name in now before vllm now1 dp2; do
  work=$(grep -o "work folder [^ ]*" "$OUT/$name.txt" 2>/dev/null | head -1 | cut -d' ' -f3)
  [ -n "$work" ] || continue
  logs=("$work"/server-*.log "$work"/home-*/state/vllm-server.log)
  grep -h "voxcap [a-z ]* applied\|voxcap [a-z ]* not applied" "${logs[@]}" 2>/dev/null \
    | sed "s/^/$name: /" >> "$OUT/fix_log_lines.txt"
  grep -h "voxcap audio front end: captured\|voxcap audio front end: CUDA graph capture" \
    "${logs[@]}" 2>/dev/null | sed "s/^/$name: /" >> "$OUT/frontend_capture_lines.txt"
done
# every session's text, part against part, per N (the same audio goes to session i everywhere)
python3 - "$OUT" > "$OUT/parity.txt" 2>&1 <<'PY'
import itertools, json, sys
from pathlib import Path
parts = {}
for f in sorted(Path(sys.argv[1]).glob("*.json")):
    try:
        parts[f.stem] = {r["n"]: r["texts"] for r in json.loads(f.read_text()).get("runs", [])
                         if not r.get("errors")}
    except (ValueError, KeyError, AttributeError):
        continue
for a, b in itertools.combinations(sorted(parts), 2):
    for n in sorted(set(parts[a]) & set(parts[b])):
        same = sum(x == y for x, y in zip(parts[a][n], parts[b][n]))
        print(f"N={n:<4} {a} vs {b}: {same}/{n} sessions with the same text")
PY
say "done"
echo done > "$OUT/done"
