#!/bin/bash
# GPU machine with two GPUs (nvidia-h200-x2), detached (issue 32): `voxcap serve --gpus 2`, vLLM's
# data parallel, against one GPU. Not run yet: written on a one-GPU session, for the next one
# that is lent nvidia-h200-x2. Parts, in order (PARTS to pick, e.g. PARTS="a kill2 b"):
#   kill1  `voxcap serve --gpus 2 --max-streams $MS` up (ready time, both GPUs' memory, the
#          session fix's lines, the process tree), then kill -9 of voxcap serve: no process
#          left and both GPUs' memory back after 5 s. Also fills the compile cache for "a".
#   a      benchmarks/capacity.py, one run, two servers up together: gpu1 (CUDA_VISIBLE_DEVICES=0)
#          and gpu2 (--data-parallel-size 2 in --vllm-args, which voxcap serve takes as --gpus 2);
#          each --max-streams $MS per GPU; the knee (largest N with p95 <= 100 ms) of each, their
#          ratio (goal >= 1.8x) and each session's text compared between the two (parity).
#   kill2  as kill1 with --api-servers 2 (vLLM's `vllm serve`, two API server processes)
#   b      as a, gpu1 against gpu2api2 (--data-parallel-size 2 --api-server-count 2): whether a
#          second API process is what the second GPU needs (issue 30: one API server process is
#          at 100 % of a core from ~24 sessions on one H200)
# Knobs: MS (streams per GPU, 32: two such engines share GPU 0 during a and b, ~65 GiB each in
# bfloat16), NS (sessions, 16,24,32,40,48,56,64), AUDIO_S (20), REPEATS (1), STOP_MS (1000:
# a server's larger N are skipped once its p95 passed this).
# Launch after the kit's pieces are stashed:  bash benchmarks/gpu/launch_prepare.sh chain_dp.sh
# Poll back to back:                          OUT=$OUT bash benchmarks/gpu/poll_prepare.sh 500
. "$(dirname "$0")/chain_common.sh"
export CUDA_VISIBLE_DEVICES=0,1  # chain_common.sh picks one GPU
# the machine's notes (KINDS.md): NVLink multicast stays off in everything started here
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
MS=${MS:-32} NS=${NS:-16,24,32,40,48,56,64} AUDIO_S=${AUDIO_S:-20} REPEATS=${REPEATS:-1}
nvidia-smi -L > "$R/dp_gpus.log"
if [ "$(nvidia-smi -L | grep -c '^GPU')" -lt 2 ]; then
  echo "RESULT needs 2 GPUs: nvidia-smi lists fewer" >> "$R/dp_gpus.log"; echo done > "$R/all.done"; exit 2
fi
gpu_mem() { nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits | tr '\n' ' '; }
kill_check() {  # NAME FLAGS...: voxcap serve --gpus 2 up, then kill -9 of it alone
  local name=$1; shift
  local log=$R/$name.log home=$W/$name
  rm -rf "$home"; mkdir -p "$home"
  { echo "RESULT $name: GPU memory before (MiB): $(gpu_mem)"
    VOXCAP_CONFIG_DIR=$home/config VOXCAP_STATE_DIR=$home/state \
      voxcap serve --model "$M" --dummy-weights --gpus 2 --max-streams "$MS" --port 8011 "$@" > "$home/serve.out" 2>&1 &
    local pid=$! t0; t0=$(date +%s)
    until grep -q "Ctrl-C stops the server." "$home/serve.out"; do
      if ! kill -0 $pid 2>/dev/null || (( $(date +%s) - t0 > 600 )); then
        echo "RESULT $name: not ready ($(( $(date +%s) - t0 )) s)"; tail -20 "$home/serve.out"
        tail -40 "$home/state/vllm-server.log"; kill -9 $pid 2>/dev/null; return 1
      fi
      sleep 2
    done
    echo "RESULT $name: ready in $(( $(date +%s) - t0 )) s; $(grep '^Ready:' "$home/serve.out")"
    echo "RESULT $name: GPU memory with it (MiB): $(gpu_mem)"
    echo "RESULT $name: session fix applied in $(grep -c 'voxcap session fix applied' "$home/state/vllm-server.log") processes"
    ps -eo pid,ppid,pgid,args --forest | grep -E "voxcap.cli serve|vllm.entrypoints|VLLM::" | grep -v grep | cut -c1-160
    kill -9 $pid; wait $pid 2>/dev/null; sleep 5
    local left; left=$(pgrep -f "vllm.entrypoints|VLLM::" | tr '\n' ' ')
    echo "RESULT $name: processes left 5 s after kill -9: ${left:-none}; GPU memory (MiB): $(gpu_mem)"
    [ -n "$left" ] && { ps -o pid,ppid,args -p "$(echo $left | tr ' ' ',')" | cut -c1-160; kill -9 $left; sleep 3; }
  } > "$log" 2>&1
}
capacity() {  # NAME SERVER...: one capacity.py run, gpu1 against the given configuration
  local name=$1; shift
  step "$name" 1500 python3 -m benchmarks.capacity --model "$M" --dummy-weights --no-eager \
    --servers "" --server "gpu1=voxcap CUDA_VISIBLE_DEVICES=0" --server "$1" \
    --sessions "$NS" --seconds "$AUDIO_S" --repeats "$REPEATS" --max-streams "$MS" \
    --stop-p95-ms "${STOP_MS:-1000}" --out "$R/$name.json"
}
for part in ${PARTS:-kill1 a kill2 b}; do
  case $part in
    kill1) kill_check dp_kill1 ;;
    a) capacity dp_a "gpu2=voxcap --data-parallel-size 2 CUDA_VISIBLE_DEVICES=0,1" ;;
    kill2) kill_check dp_kill2 --api-servers 2 ;;
    b) capacity dp_b "gpu2api2=voxcap --data-parallel-size 2 --api-server-count 2 CUDA_VISIBLE_DEVICES=0,1" ;;
  esac
done
echo done > "$R/all.done"
