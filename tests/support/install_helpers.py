"""Helpers of the installer tests (tests/install): voxcap installed into temporary HOMEs from
a copy of this checkout, offline.

No network and no reinstall of torch/vLLM: the installer's ``--reuse-site`` makes the packages
of the test environment visible in the new one (a .pth file) and pip runs with ``--no-index
--no-build-isolation``; the extras are ``audio,gui``, whose packages the test environment has
(``--cpu`` would ask for torchvision/torchaudio, which scripts/setup-dev.sh removes). vLLM's CPU
build is still importable through the reused folder, so ``voxcap doctor`` sees it. Each HOME has
a space in its path (the launcher's Exec quoting).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SITE = sysconfig.get_paths()["purelib"]  # the test environment's packages
PIP_ARGS = "--no-index --no-build-isolation"


def copy_checkout(dest: Path) -> Path:
    """The working tree as git sees it (tracked and new files, not ignored ones), so builds
    write their build/ and *.egg-info there and not into the real checkout."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src, dst = REPO / rel, dest / rel
        if not (src.exists() or src.is_symlink()):
            continue  # deleted in the working tree
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            dst.symlink_to(os.readlink(src))
        else:
            shutil.copy2(src, dst)
    return dest


@dataclass
class Home:
    """A temporary HOME and the environment voxcap's scripts run with there."""

    root: Path
    checkout: Path

    @property
    def prefix(self) -> Path:
        return self.root / ".local" / "share" / "voxcap"

    @property
    def desktop_file(self) -> Path:
        return self.root / ".local" / "share" / "applications" / "voxcap.desktop"

    @property
    def env(self) -> dict:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("XDG_", "VOXCAP_", "PULSE_", "VIRTUAL_ENV"))}
        # tools that keep state under HOME (the rustup shims on PATH) keep using the real one,
        # so what is left in the temporary HOME is what voxcap's scripts made
        for var, name in (("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo")):
            if var not in env and (Path.home() / name).is_dir():
                env[var] = str(Path.home() / name)
        env.update(HOME=str(self.root), LANG="C.UTF-8", PYTHONDONTWRITEBYTECODE="1",
                   TMPDIR=str(self.tmp))
        return env

    @property
    def tmp(self) -> Path:
        """This HOME's temporary folder (beside it): what uninstall.sh cleans there is this
        test's, never the machine's /tmp, where other runs keep their working folders."""
        path = self.root.parent / "tmp"
        path.mkdir(exist_ok=True)
        return path

    def install_argv(self, *args: str, extras: str = "audio,gui") -> list[str]:
        return ["bash", str(self.checkout / "installer" / "install.sh"), "--python",
                sys.executable, "--extras", extras, "--reuse-site", SITE, "--pip-args", PIP_ARGS,
                *args]

    def install(self, *args: str, check: bool = True, timeout: float = 300,
                **kw) -> subprocess.CompletedProcess:
        r = subprocess.run(self.install_argv(*args), env=self.env, cwd=self.root,
                           capture_output=True, text=True, timeout=timeout, **kw)
        if check and r.returncode != 0:
            raise AssertionError(f"install.sh failed ({r.returncode}):\n{r.stdout[-3000:]}\n"
                                 f"{r.stderr[-3000:]}")
        return r

    def uninstall(self, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", str(self.checkout / "installer" / "uninstall.sh"), *args],
                              env=env or self.env, cwd=self.root, capture_output=True, text=True,
                              timeout=120)

    def current_env(self) -> Path:
        return (self.prefix / os.readlink(self.prefix / "venv")).resolve()

    def files(self) -> set[str]:
        """Every file and link under HOME (relative), but inside voxcap's environments."""
        out = set()
        for path in self.root.rglob("*"):
            rel = path.relative_to(self.root)
            if rel.parts[:4] == (".local", "share", "voxcap", "envs") and len(rel.parts) > 5:
                continue
            if path.is_file() or path.is_symlink():
                out.add(str(rel))
        return out

    def run_voxcap(self, *args: str, env: dict | None = None, timeout: float = 120):
        return subprocess.run([str(self.prefix / "venv" / "bin" / "voxcap"), *args],
                              env=env or self.env, cwd=self.root, capture_output=True, text=True,
                              timeout=timeout)


def exec_argv(desktop_file: Path, key: str = "Exec") -> list[str]:  # Exec keys only
    """The command of a .desktop file's Exec line, unquoted as the desktop entry spec says:
    string escapes first (\\\\ -> \\), then shell-like quoting."""
    for line in desktop_file.read_text().splitlines():
        if line.startswith(f"{key}="):
            value = line.split("=", 1)[1]
            value = value.replace("\\s", " ").replace("\\n", "\n").replace("\\t", "\t")
            value = value.replace("\\\\", "\\")
            return [a.replace("%%", "%") for a in shlex.split(value)]
    raise AssertionError(f"no {key}= line in {desktop_file}")


def wait_for_pip(home: Home, old_env: str | None, timeout: float = 120) -> None:
    """Until the installer's pip runs in a new environment (pid of that pip seen in /proc)."""
    envs = home.prefix / "envs"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for env in envs.glob("*") if envs.is_dir() else ():
            if env.name == old_env:
                continue
            needle = f"{env}/bin/python".encode()
            for proc in Path("/proc").glob("[0-9]*"):
                try:
                    cmdline = (proc / "cmdline").read_bytes()
                except OSError:
                    continue
                # its `pip install`, not the CPU build's closing `pip uninstall ... || true`,
                # which a Ctrl-C cannot fail (a loaded machine's slow scan can miss the first)
                if cmdline.startswith(needle) and b"\0pip\0" in cmdline \
                        and b"\0install\0" in cmdline:
                    return
        time.sleep(0.05)
    raise AssertionError("the installer's pip never started")


def start_install(home: Home, *args: str) -> subprocess.Popen:
    return subprocess.Popen(home.install_argv(*args), env=home.env, cwd=home.root,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass




def new_home(tmp_path_factory, checkout, name: str) -> Home:
    root = tmp_path_factory.mktemp(name) / "my home"
    root.mkdir()
    return Home(root, checkout)
