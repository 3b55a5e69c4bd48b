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
from voxcap.engine.settings import EngineSettings
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
    settings = EngineSettings(str(tiny_model_dir), dummy_weights=True, max_streams=4,
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


def test_serve_without_vllm_says_where_it_belongs(tiny_model_dir):
    """A bare interpreter (no site-packages: no vLLM), as on the computer without a GPU."""
    repo = Path(__file__).resolve().parents[2]
    r = subprocess.run([sys.executable, "-S", "-m", "voxcap.cli", "serve", "--model",
                        str(tiny_model_dir), "--dummy-weights"], capture_output=True, text=True,
                       timeout=60, env=dict(os.environ, PYTHONPATH=str(repo)), cwd=repo)
    assert r.returncode == 2 and "error: vLLM is not installed" in r.stderr, r.stderr
    assert "run `voxcap serve` on a computer with an NVIDIA GPU" in r.stderr
    assert "Traceback" not in r.stderr
