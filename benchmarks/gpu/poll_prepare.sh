#!/bin/bash
# wait up to $1 s or until chain_prepare is done; print results so far; copy results to $OUT
. "$(dirname "$0")/../../.gpu/kit/env.sh"; R=$VOXCAP_GPU_WORK/res
end=$(( $(date +%s) + ${1:-60} ))
while [ "$(date +%s)" -lt $end ] && [ ! -f "$R/all.done" ]; do sleep 3; done
nvidia-smi --query-gpu=index,memory.used,utilization.gpu --format=csv,noheader
ls "$R" | tr '\n' ' '; echo
for f in "$R"/*.log; do echo "== $(basename $f) $(head -1 $f) -> $(tail -1 $f)"; grep -E '^RESULT|^EXIT|Error|rror:|Traceback|ready|prepared|cached|^ +[0-9] |shutdown|total|TOTAL|[0-9]+\.[0-9] s' "$f" | cut -c1-260 | tail -14; done
[ -n "${OUT:-}" ] && tar -czf "$OUT/res.tgz" -C "$VOXCAP_GPU_WORK" res
true
