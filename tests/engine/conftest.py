"""Fixtures of the engine tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def fake_gpu(tmp_path_factory):
    """A folder with a stand-in libnvidia-ml.so.1: a process with LD_LIBRARY_PATH on it sees the
    NVIDIA GPU that its FAKE_NVML_* variables describe (tests/support/fake_nvml.c)."""
    from support.fake_nvml import build_fake_nvml

    built = build_fake_nvml(tmp_path_factory.mktemp("nvml"))
    if built is None:
        pytest.skip("no C compiler to build the fake libnvidia-ml.so.1")
    return built
