"""``voxcap serve``'s vLLM command line: the in-process engine's arguments, read back by vLLM's
own server parser (no server started), and the server's API key file."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from voxcap.engine.server import key as server_key
from voxcap.engine.server.args import engine_args_for, engine_flags, server_command
from voxcap.engine.settings import InProcessSettings
from voxcap.errors import ConfigError


def test_flags_follow_vllms_convention():
    assert engine_flags({"max_num_seqs": 2, "enforce_eager": True, "trust_remote_code": False,
                         "limit_mm_per_prompt": {"audio": 1}, "sizes": (1, 2), "seed": None}) == [
        "--max-num-seqs", "2", "--enforce-eager", "--limit-mm-per-prompt", '{"audio": 1}',
        "--sizes", "[1, 2]"]


@pytest.mark.parametrize("eager", [False, True])
def test_vllms_server_parser_reads_back_the_engine_args(tiny_model_dir, eager):
    """Every argument LocalEngine.engine_args() builds (and any added there later, such as a
    precision) reaches vLLM's server with the same value."""
    from vllm.engine.arg_utils import AsyncEngineArgs
    from vllm.entrypoints.launchers.cli_args import make_arg_parser
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    # what the precision setting and --engine-arg add on a GPU travel the same way
    gpu_args = {"quantization": "fp8", "kv_cache_dtype": "fp8",
                "attention_config": {"flash_attn_version": 2}} if eager else {}
    settings = InProcessSettings(str(tiny_model_dir), dummy_weights=True, max_streams=4,
                              enforce_eager=eager, kv_cache_gib=0.25,
                              extra_engine_args=gpu_args).validated()
    args, info = engine_args_for(settings, "cpu")
    assert info.path == tiny_model_dir
    cmd = server_command(args, host="127.0.0.1", port=8123, served_name="tiny",
                         extra=["--max-num-seqs", "3"])
    assert cmd[:3] == [sys.executable, "-m", "vllm.entrypoints.openai.api_server"]
    parsed = make_arg_parser(FlexibleArgumentParser()).parse_args(cmd[3:])
    assert (parsed.host, parsed.port, parsed.served_model_name) == ("127.0.0.1", 8123, ["tiny"])
    from_cli = AsyncEngineArgs.from_cli_args(parsed)
    direct = AsyncEngineArgs(**{**args, "max_num_seqs": 3})  # the extra flag won
    for key in args:
        assert getattr(from_cli, key) == getattr(direct, key), key
    assert args["mm_processor_cache_gb"] == 0 and args["max_num_batched_tokens"] == 256
    assert args["compilation_config"]["cudagraph_mode"] == "FULL_DECODE_ONLY"
    assert args["kv_cache_memory_bytes"] == int(0.25 * 2**30)
    assert from_cli.enable_prefix_caching is False  # the server's own flag (SERVER_FLAGS)
    again = make_arg_parser(FlexibleArgumentParser()).parse_args(
        server_command(args, host="127.0.0.1", port=1, served_name="t",
                       extra=["--enable-prefix-caching"])[3:])
    assert AsyncEngineArgs.from_cli_args(again).enable_prefix_caching is True  # extra wins


def test_vllms_parsers_read_back_data_parallel(tiny_model_dir):
    """`voxcap serve --gpus 2 [--api-servers 2]`: vLLM's own parsers read one engine per GPU,
    each with the one-GPU engine's arguments (its KV cache and max_num_seqs for --max-streams),
    and vLLM's config makes them independent engines behind one load balancer (a dense model)."""
    from vllm.engine.arg_utils import AsyncEngineArgs
    from vllm.entrypoints.cli.serve import ServeSubcommand
    from vllm.entrypoints.launchers.cli_args import make_arg_parser
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    settings = InProcessSettings(str(tiny_model_dir), dummy_weights=True, max_streams=3,
                              kv_cache_gib=0.25).validated()
    args, _ = engine_args_for(settings, "cpu")
    cmd = server_command(args, host="127.0.0.1", port=8123, served_name="tiny", gpus=2)
    assert cmd[1:3] == ["-m", "vllm.entrypoints.openai.api_server"]
    parsed = make_arg_parser(FlexibleArgumentParser()).parse_args(cmd[3:])
    assert parsed.data_parallel_size == 2 and parsed.api_server_count is None
    from_cli = AsyncEngineArgs.from_cli_args(parsed)
    direct = AsyncEngineArgs(**args)
    for key in args:
        assert getattr(from_cli, key) == getattr(direct, key), key
    config = from_cli.create_engine_config()
    p = config.parallel_config
    assert (p.data_parallel_size, p.data_parallel_size_local) == (2, 2)  # both engines here
    assert not (p.data_parallel_external_lb or p.data_parallel_hybrid_lb)  # vLLM balances
    assert not config.model_config.is_moe  # dense: each engine runs as one (no DP waves)
    assert config.scheduler_config.max_num_seqs == 3  # --max-streams is per engine, per GPU
    assert config.cache_config.kv_cache_memory_bytes == int(0.25 * 2**30)

    # several API servers: only `vllm serve` starts them (the server module runs one)
    multi = server_command(args, host="127.0.0.1", port=8123, served_name="tiny", gpus=2,
                           api_servers=2)
    assert multi[1:4] == ["-m", "vllm.entrypoints.cli.main", "serve"]
    parser = FlexibleArgumentParser()
    ServeSubcommand().subparser_init(parser.add_subparsers(dest="command"))
    served = parser.parse_args(multi[3:])
    assert (served.command, served.api_server_count, served.data_parallel_size) == ("serve", 2, 2)
    assert AsyncEngineArgs.from_cli_args(served).max_num_seqs == 3
    assert (served.host, served.port, served.served_model_name) == ("127.0.0.1", 8123, ["tiny"])


def test_key_generated_once_owner_only_and_reused(tmp_path):
    path = tmp_path / "config" / "serve-api-key"
    key, created = server_key.ensure_key(path)
    assert created and len(key) > 40
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert server_key.ensure_key(path) == (key, False)
    path.chmod(0o644)
    with pytest.raises(ConfigError) as e:
        server_key.ensure_key(path)
    assert "chmod 600" in e.value.fix


def run_serve(*args, env=None):
    return subprocess.run([sys.executable, "-m", "voxcap.cli", "serve", *args],
                          capture_output=True, text=True, timeout=120, env=env)


def test_serve_print_command_and_bad_input(tiny_model_dir, tmp_path):
    r = run_serve("--model", str(tiny_model_dir), "--dummy-weights", "--print-command",
                  "--vllm-args=--enable-log-requests")
    assert r.returncode == 0, r.stderr
    assert "-m vllm.entrypoints.openai.api_server" in r.stdout
    assert "--host 127.0.0.1 --port 8000" in r.stdout and "--mm-processor-cache-gb 0" in r.stdout
    assert r.stdout.rstrip().endswith("--enable-log-requests")
    for args, words in ((["--model", str(tmp_path / "none")], "Model directory does not exist"),
                        (["--port", "0"], "is not a TCP port"),
                        (["--vllm-args", "'x"], "--vllm-args"),
                        (["--graph-mode", "FULL"], "FULL")):
        if args[0] != "--model":
            args = ["--model", str(tiny_model_dir), "--dummy-weights", *args]
        r = run_serve(*args)
        assert r.returncode == 2 and words in r.stderr and "fix:" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr
    with socket.socket() as busy:  # refused before vLLM starts (it would fail minutes later)
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = run_serve("--model", str(tiny_model_dir), "--dummy-weights", "--port", str(port),
                      env=dict(os.environ, VOXCAP_CONFIG_DIR=str(tmp_path / "config")))
    assert r.returncode == 2 and f"Cannot listen on 127.0.0.1:{port}" in r.stderr, r.stderr
    assert "--port" in r.stderr and not (tmp_path / "config").exists()  # no key made for it


@pytest.fixture(scope="module")
def fake_nvml(tmp_path_factory) -> Path:
    from support.fake_nvml import fake_nvml_or_skip

    return fake_nvml_or_skip(tmp_path_factory)


def gpus_env(fake_nvml: Path, count: int, **more: str) -> dict:
    """This environment with ``count`` simulated H200s (tests/support/fake_nvml.c)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("FAKE_NVML") and k != "CUDA_VISIBLE_DEVICES"}
    return dict(env, LD_LIBRARY_PATH=str(fake_nvml), VOXCAP_NVML="ctypes",
                FAKE_NVML_COUNT=str(count), **more)


def test_serve_gpus_refused_beyond_what_nvml_sees(tiny_model_dir, fake_nvml):
    """--gpus N > the GPUs NVML sees (or CUDA_VISIBLE_DEVICES shows): one line and the fix
    before vLLM starts; N that are there: vLLM's data parallel over them."""
    base = ("--model", str(tiny_model_dir), "--dummy-weights", "--print-command")
    # vLLM's own flag in --vllm-args counts as --gpus: the same checks, no second copy
    for ask in (["--gpus", "2"], ["--vllm-args=--data_parallel_size=2 --enable-log-requests"]):
        r = run_serve(*base, *ask, env=gpus_env(fake_nvml, 2))
        assert r.returncode == 0, r.stderr
        assert r.stdout.count("--data-parallel-size 2 ") == 1, r.stdout
        assert "data_parallel" not in r.stdout and "--api-server-count" not in r.stdout
        assert "-m vllm.entrypoints.openai.api_server" in r.stdout
    for count, more, ask, words, fix in (
            (1, {}, "--gpus", "--gpus 2 asks for 2 GPUs, and 1 is seen here: GPU 0 NVIDIA H200.",
             "use --gpus 1"),
            (1, {}, "--vllm-args=-dp", "--gpus 2 asks for 2 GPUs, and 1 is seen here",
             "use --gpus 1"),
            (2, {"CUDA_VISIBLE_DEVICES": "1"}, "--gpus", "and 1 is seen here "
             "(CUDA_VISIBLE_DEVICES=1 shows 1 of the 2): GPU 1 NVIDIA H200.",
             "or let CUDA_VISIBLE_DEVICES list 2 GPUs"),
            (0, {}, "--gpus", "--gpus 2: no NVIDIA GPU is seen here",
             "at most the number of GPUs")):
        args = ["--gpus", "2"] if ask == "--gpus" else [f"{ask} 2"]
        r = run_serve(*base, *args, env=gpus_env(fake_nvml, count, **more))
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 2 and words in lines[0] and fix in lines[1], r.stderr
    for args, words in ((["--gpus", "0"], "--gpus 0 is not a number of GPUs"),
                        (["--gpus", "2", "--api-servers", "2"], "vLLM's CPU build cannot start"),
                        (["--vllm-args=--api-server-count 2"], "vLLM's CPU build cannot start"),
                        (["--vllm-args=-asc"], "-asc '' is not a number")):
        r = run_serve(*base, *args, env=gpus_env(fake_nvml, 2))
        assert r.returncode == 2 and words in r.stderr and "fix:" in r.stderr, r.stderr


EACH_GPU = """
import json, sys
from dataclasses import replace
from voxcap import gpu
from voxcap.engine.server.args import engine_args_for
from voxcap.engine.settings import InProcessSettings
from voxcap.errors import VoxcapError
gpus = gpu.list_gpus()
if sys.argv[2] != "-":  # the second GPU busy: only this much of it free
    gpus[1] = replace(gpus[1], memory_free_bytes=int(float(sys.argv[2]) * 2**30))
settings = InProcessSettings(sys.argv[1], dummy_weights=True, max_streams=2).validated()
try:
    args, _ = engine_args_for(settings, "cuda", gpus)
except VoxcapError as exc:
    print(json.dumps({"error": exc.message, "fix": exc.fix}))
else:
    print(json.dumps({"max_num_seqs": args["max_num_seqs"]}))
"""


def test_each_gpu_must_hold_its_engine(tiny_model_dir, fake_nvml):
    """The CUDA build's sizing (NVML through the fake driver): the engine is sized on the first
    GPU as in-process; every GPU of --gpus must have that much free, or the start is refused
    with the GPU named."""
    import json

    def engine_args(second_free):
        r = subprocess.run([sys.executable, "-c", EACH_GPU, str(tiny_model_dir), second_free],
                           env=gpus_env(fake_nvml, 2, FAKE_NVML_TOTAL=str(16 * 2**30),
                                        FAKE_NVML_FREE=str(15 * 2**30), FAKE_NVML_RESERVED="0"),
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout.strip().splitlines()[-1])

    assert engine_args("-") == {"max_num_seqs": 2}
    refused = engine_args("0.5")
    assert refused["error"].startswith("GPU 1 (NVIDIA H200) has 0.50 GiB free; each of the 2 "
                                       "engines needs about "), refused
    assert "--max-streams" in refused["fix"] and "--gpus" in refused["fix"]


def test_serve_without_vllm_says_where_it_belongs(tiny_model_dir):
    """A bare interpreter (no site-packages: no vLLM), as on the computer without a GPU."""
    repo = Path(__file__).resolve().parents[3]
    r = subprocess.run([sys.executable, "-S", "-m", "voxcap.cli", "serve", "--model",
                        str(tiny_model_dir), "--dummy-weights"], capture_output=True, text=True,
                       timeout=60, env=dict(os.environ, PYTHONPATH=str(repo)), cwd=repo)
    assert r.returncode == 2 and "error: vLLM is not installed" in r.stderr, r.stderr
    assert "run `voxcap serve` on a computer with an NVIDIA GPU" in r.stderr
    assert "Traceback" not in r.stderr
