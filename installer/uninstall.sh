#!/usr/bin/env bash
# Remove what installer/install.sh put in place: voxcap's environment, the `voxcap` command,
# the applications-menu entry (and the desktop one), the icons, voxcap's settings and caches and
# the model it downloaded. Transcripts (saved sessions) are kept unless --purge is given.
# (started with `sh uninstall.sh`: run again under bash, which the rest needs)
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
set -euo pipefail

usage() {
  cat <<EOF
Usage: uninstall.sh [options]
  --purge          also delete the saved transcripts (sessions) and the logs
  --keep-model     keep the downloaded model (about 9 GB) for a later install
  --keep-settings  keep the settings (and the remote server's API key)
  --prefix DIR     voxcap's folder, as given to install.sh (default: \${XDG_DATA_HOME:-~/.local/share}/voxcap)
  --bin-dir DIR    where install.sh put the \`voxcap\` command (default: ~/.local/bin)
  -q, --quiet      less output
EOF
}

DATA_HOME=${XDG_DATA_HOME:-$HOME/.local/share}
PREFIX="$DATA_HOME/voxcap" BIN_DIR="$HOME/.local/bin"
PURGE=0 KEEP_MODEL=0 KEEP_SETTINGS=0 QUIET=0
while (($#)); do
  case "$1" in
    --purge) PURGE=1 ;;
    --keep-model) KEEP_MODEL=1 ;;
    --keep-settings) KEEP_SETTINGS=1 ;;
    --prefix) PREFIX=${2:?--prefix needs a folder}; shift ;;
    --bin-dir) BIN_DIR=${2?--bin-dir needs a folder}; shift ;;
    -q|--quiet) QUIET=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "uninstall.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
say() { ((QUIET)) || printf '%s\n' "$*"; }
CONFIG_DIR=${VOXCAP_CONFIG_DIR:-${XDG_CONFIG_HOME:-$HOME/.config}/voxcap}
CACHE_DIR=${VOXCAP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/voxcap}  # vLLM's caches too (vllm/)
STATE_DIR=${VOXCAP_STATE_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/voxcap}  # the logs
APPS_DIR="$DATA_HOME/applications"
ICON_DIR="$DATA_HOME/icons/hicolor"

# Refuse a folder that is not voxcap's (a mistyped --prefix must not empty someone's home).
if [ -d "$PREFIX" ] && [ "$(basename "$PREFIX")" != voxcap ] && [ ! -f "$PREFIX/installed-files.txt" ]; then
  echo "uninstall.sh: $PREFIX does not look like voxcap's folder (no installed-files.txt): nothing removed" >&2
  exit 2
fi
if [ -d "$PREFIX" ] && grep -qsF -- "$PREFIX/envs/" /proc/[0-9]*/cmdline 2>/dev/null; then
  echo "voxcap is running: quit it first (its window's menu, or the tray icon), then run this again." >&2
  exit 1
fi

removed=()
remove() {  # remove $1 if it exists (file, link or folder)
  if [ -e "$1" ] || [ -L "$1" ]; then
    rm -rf -- "$1" && removed+=("$1")
  fi
}

# Files outside voxcap's folder, as the installer recorded them; then the usual places, in case
# the record is gone.
if [ -f "$PREFIX/installed-files.txt" ]; then
  while IFS= read -r f; do
    [ -n "$f" ] || continue
    if [ -L "$f" ] && [[ "$(readlink "$f")" != "$PREFIX/"* ]]; then continue; fi  # not ours now
    remove "$f"
  done <"$PREFIX/installed-files.txt"
fi
remove "$APPS_DIR/voxcap.desktop"
for f in "$ICON_DIR"/*/apps/voxcap.png "$ICON_DIR"/scalable/apps/voxcap.svg; do remove "$f"; done
link="$BIN_DIR/voxcap"
if [ -L "$link" ] && [[ "$(readlink "$link")" == "$PREFIX/"* ]]; then remove "$link"; fi
DESKTOP_DIR=$(xdg-user-dir DESKTOP 2>/dev/null || true)
[ -n "$DESKTOP_DIR" ] && [ "$DESKTOP_DIR" != "$HOME" ] || DESKTOP_DIR="$HOME/Desktop"
if [ -f "$DESKTOP_DIR/voxcap.desktop" ] && grep -qF -- "$PREFIX/venv/bin/voxcap-gui" "$DESKTOP_DIR/voxcap.desktop"; then
  remove "$DESKTOP_DIR/voxcap.desktop"
fi
if command -v gtk-update-icon-cache >/dev/null 2>&1 && [ -f "$ICON_DIR/index.theme" ]; then
  gtk-update-icon-cache -q -t "$ICON_DIR" >/dev/null 2>&1 || true
fi
# empty folders the installer made (never the shared ones' parents beyond these)
for d in "$ICON_DIR"/*/apps "$ICON_DIR"/* "$ICON_DIR" "$DATA_HOME/icons" "$APPS_DIR" "$BIN_DIR"; do
  [ -d "$d" ] && rmdir -- "$d" 2>/dev/null || true
done

# voxcap's own folders: the program, and the model unless kept; transcripts stay unless --purge
clean_dir() {
  local dir=$1 entry
  [ -d "$dir" ] || return 0
  for entry in "$dir"/* "$dir"/.[!.]*; do
    [ -e "$entry" ] || [ -L "$entry" ] || continue
    case "$(basename "$entry")" in
      sessions) ((PURGE)) && remove "$entry" ;;
      models) ((KEEP_MODEL)) || remove "$entry" ;;
      *) remove "$entry" ;;
    esac
  done
  rmdir -- "$dir" 2>/dev/null || true
}
clean_dir "$PREFIX"
APP_DATA=${VOXCAP_DATA_DIR:-$DATA_HOME/voxcap}  # the app's (differs when installed with --prefix)
[ "$APP_DATA" = "$PREFIX" ] || clean_dir "$APP_DATA"
((KEEP_SETTINGS)) || remove "$CONFIG_DIR"
remove "$CACHE_DIR"
((PURGE)) && remove "$STATE_DIR"

say "voxcap is uninstalled."
((${#removed[@]})) && ! ((QUIET)) && printf '  removed %s\n' "${removed[@]}"
dirs=("$PREFIX"); [ "$APP_DATA" = "$PREFIX" ] || dirs+=("$APP_DATA")
for dir in "${dirs[@]}"; do
  [ -d "$dir/sessions" ] && say "  Your transcripts are kept in $dir/sessions (uninstall.sh --purge deletes them)."
  [ -d "$dir/models" ] && say "  The model is kept in $dir/models."
done
[ -d "$STATE_DIR" ] && say "  The logs are kept in $STATE_DIR for a bug report (uninstall.sh --purge deletes them)."
exit 0
