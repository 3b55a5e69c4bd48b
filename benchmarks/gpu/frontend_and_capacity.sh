#!/bin/bash
# The audio front end and the realtime capacity in one H200 lease, after the GPU kit is installed
# (bash .gpu/kit/install.sh): the checkout copied to a folder of its own first (later calls
# re-send the working tree; the runs must not see it change), then, in order: the front end
# alone (d) and its tokens against vLLM's per-session path (a) (audio_frontend_steps.sh),
# capacity (realtime_capacity.sh, into OUT/cap), the app's step off/on (b). ~20 minutes.
# Detached:  setsid nohup bash benchmarks/gpu/frontend_and_capacity.sh > /dev/null 2>&1 < /dev/null &
# Watch:     cat $VOXCAP_GPU_WORK/res37/progress (OUT/done at the end)
# env: CAP_BUDGET_S (the capacity part's budget, default 660 s)
W=${VOXCAP_GPU_WORK:-$HOME/voxcap-gpu} T0=$(date +%s)
SRC=$W/src37 OUT=$W/res37
rm -rf "$SRC" "$OUT"; mkdir -p "$SRC" "$OUT"
tar -cf - --exclude='./.gpu/[mntv][0-9][0-9]' --exclude=./.git . | tar -xf - -C "$SRC"
cd "$SRC" || exit 1
say() { echo "$(date +%T) +$(( $(date +%s) - T0 ))s $*" >> "$OUT/progress"; }

PARTS="d a" MARK_DONE=0 bash benchmarks/gpu/audio_frontend_steps.sh "$OUT"
say "capacity"
BUDGET_S=${CAP_BUDGET_S:-660} bash benchmarks/gpu/realtime_capacity.sh "$OUT/cap" > "$OUT/cap.out" 2>&1
say "capacity exit $?"
PARTS=b MARK_DONE=0 bash benchmarks/gpu/audio_frontend_steps.sh "$OUT"
say "done"
echo done > "$OUT/done"
