"""Build tests/support/fake_nvml.c into a ``libnvidia-ml.so.1`` (needs a C compiler); point
LD_LIBRARY_PATH at its folder and NVML readers in that process see a fake NVIDIA GPU."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

SOURCE = Path(__file__).with_name("fake_nvml.c")


def build_fake_nvml(directory: Path) -> Path | None:
    """The folder holding the built library, or None when no C compiler is installed."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    directory.mkdir(parents=True, exist_ok=True)
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(directory / "libnvidia-ml.so.1"),
                    str(SOURCE)], check=True, capture_output=True)
    return directory


def fake_nvml_or_skip(tmp_path_factory) -> Path:
    """For a module-scoped fixture: the built library's folder; the test skipped without a C
    compiler."""
    import pytest

    built = build_fake_nvml(tmp_path_factory.mktemp("nvml"))
    if built is None:
        pytest.skip("no C compiler to build the fake libnvidia-ml.so.1")
    return built
