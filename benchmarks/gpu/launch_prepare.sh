#!/bin/bash
# GPU machine, last call of a lease (after the kit's pieces are stashed; docs/perf/README.md): install,
# bytecode (as pip leaves it), the real-shape model, then the chain ($1, default chain_prepare.sh;
# chain_carry.sh for the token carry's round) detached. Then poll:
#   OUT=$OUT bash benchmarks/gpu/poll_prepare.sh 500      (results as $OUT/res.tgz)
cd "$(dirname "$0")/../.."
bash .gpu/kit/install.sh 2>&1 | tail -3 || exit
. .gpu/kit/env.sh
R=$VOXCAP_GPU_WORK/res; mkdir -p "$R"
python3 .gpu/kit/make_real_shape_model.py "$VOXCAP_GPU_WORK/rsmodel" > "$R/model.log" 2>&1 || { cat "$R/model.log"; exit 3; }
SP=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
python3 -m compileall -q -j 16 "$SP" > /dev/null 2>&1; echo "pyc: $(find $SP/vllm -name '*.pyc' | wc -l)"
python3 -c "import voxcap.engine.inprocess.prepare as p, voxcap.commands.prepare; print('voxcap', p.__file__)" || exit 4
nvidia-smi -L
setsid nohup bash benchmarks/gpu/${1:-chain_prepare.sh} > /dev/null 2>&1 < /dev/null &
sleep 1; echo launched
