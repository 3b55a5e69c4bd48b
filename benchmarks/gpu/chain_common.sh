# Sourced by the GPU chains (chain_precision.sh, chain_consumer.sh): the kit's environment, the
# folders (P benchmarks, W work, R results, M real-shape model), one GPU, caches on the work disk,
# and step NAME LIMIT CMD...: CMD under a time limit, its output and exit code in $R/NAME.log.
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
. .gpu/kit/env.sh
P=$PWD/benchmarks W=$VOXCAP_GPU_WORK R=$VOXCAP_GPU_WORK/res M=$VOXCAP_GPU_WORK/rsmodel
export CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_ORDER=PCI_BUS_ID
export VLLM_CACHE_ROOT=$W/cc/vllm TORCHINDUCTOR_CACHE_DIR=$W/cc/inductor TRITON_CACHE_DIR=$W/cc/triton
step() { local name=$1 limit=$2; shift 2; ( date +%s.%N; timeout "$limit" "$@"; echo "EXIT $?"; date +%s.%N ) > "$R/$name.log" 2>&1; }
