#!/usr/bin/env bash
# Remove what installer/install.sh put in place: voxcap's environment, the `voxcap` command,
# the applications-menu entry (and the desktop one), the icons, voxcap's caches, the model it
# downloaded and the temporary files voxcap's runs left (vLLM's among them). It says what it
# removes, with sizes, before it starts, and each step as it goes. Settings and API keys,
# transcripts (saved sessions) and the logs are kept unless --purge is given.
# (started with `sh uninstall.sh`: run again under bash, which the rest needs)
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
set -euo pipefail

usage() {
  cat <<EOF
Usage: uninstall.sh [options]
  --purge          also delete the settings and API keys, the saved transcripts (sessions) and
                   the logs
  --keep-model     keep the downloaded model (about 9 GB) for a later install
  --keep-settings  keep the settings and API keys (the default; --purge deletes them)
  --dry-run        say what would be removed and kept, with sizes; remove nothing
  -y, --yes        do not ask before removing (it asks only when run in a terminal)
  --prefix DIR     voxcap's folder, as given to install.sh (default: \${XDG_DATA_HOME:-~/.local/share}/voxcap)
  --bin-dir DIR    where install.sh put the \`voxcap\` command (default: ~/.local/bin)
  -q, --quiet      less output
EOF
}

DATA_HOME=${XDG_DATA_HOME:-$HOME/.local/share}
PREFIX="$DATA_HOME/voxcap" BIN_DIR="$HOME/.local/bin"
PURGE=0 KEEP_MODEL=0 QUIET=0 DRY_RUN=0 YES=0
while (($#)); do
  case "$1" in
    --purge) PURGE=1 ;;
    --keep-model) KEEP_MODEL=1 ;;
    --keep-settings) ;;  # the default now
    --dry-run) DRY_RUN=1 ;;
    -y|--yes) YES=1 ;;
    --prefix) PREFIX=${2:?--prefix needs a folder}; shift ;;
    --bin-dir) BIN_DIR=${2?--bin-dir needs a folder}; shift ;;
    -q|--quiet) QUIET=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "uninstall.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
say() { ((QUIET)) || printf '%s\n' "$*"; }
CONFIG_DIR=${VOXCAP_CONFIG_DIR:-${XDG_CONFIG_HOME:-$HOME/.config}/voxcap}  # settings, API keys
CACHE_DIR=${VOXCAP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/voxcap}  # vLLM's caches too (vllm/)
STATE_DIR=${VOXCAP_STATE_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/voxcap}  # the logs
APP_DATA=${VOXCAP_DATA_DIR:-$DATA_HOME/voxcap}  # the app's (differs when installed with --prefix)
TMP_ROOT=${TMPDIR:-/tmp}
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

# ------------------------------------------------------------------ what goes, what stays ----
# Groups of paths, each with what it is for a person: LABELS[i] and PATHS[i] (one a line).
LABELS=() PATHS=() KEPT_LABELS=() KEPT_PATHS=()
exists() { [ -e "$1" ] || [ -L "$1" ]; }
lines() {  # the arguments that exist, one a line
  local p
  for p in "$@"; do exists "$p" && printf '%s\n' "$p"; done
  return 0
}
add() {  # label, then paths: a group to remove (when any path exists)
  local label=$1 found; shift
  found=$(lines "$@")
  [ -n "$found" ] || return 0
  LABELS+=("$label"); PATHS+=("$found")
}
keep() {  # label, then paths: a group kept (said, when any exists)
  local label=$1 found; shift
  found=$(lines "$@")
  [ -n "$found" ] || return 0
  KEPT_LABELS+=("$label"); KEPT_PATHS+=("$found")
}

# the command, the menu entry, the desktop launcher, the icons: as the installer recorded them,
# then the usual places, in case the record is gone
launch=()
if [ -f "$PREFIX/installed-files.txt" ]; then
  while IFS= read -r f; do
    [ -n "$f" ] || continue
    if [ -L "$f" ] && [[ "$(readlink "$f")" != "$PREFIX/"* ]]; then continue; fi  # not ours now
    launch+=("$f")
  done <"$PREFIX/installed-files.txt"
fi
launch+=("$APPS_DIR/voxcap.desktop")
for f in "$ICON_DIR"/*/apps/voxcap.png "$ICON_DIR"/scalable/apps/voxcap.svg; do launch+=("$f"); done
link="$BIN_DIR/voxcap"
if [ -L "$link" ] && [[ "$(readlink "$link")" == "$PREFIX/"* ]]; then launch+=("$link"); fi
DESKTOP_DIR=$(xdg-user-dir DESKTOP 2>/dev/null || true)
[ -n "$DESKTOP_DIR" ] && [ "$DESKTOP_DIR" != "$HOME" ] || DESKTOP_DIR="$HOME/Desktop"
if [ -f "$DESKTOP_DIR/voxcap.desktop" ] && grep -qF -- "$PREFIX/venv/bin/voxcap-gui" "$DESKTOP_DIR/voxcap.desktop"; then
  launch+=("$DESKTOP_DIR/voxcap.desktop")
fi
mapfile -t launch < <(printf '%s\n' "${launch[@]}" | awk '!seen[$0]++')  # each once

# voxcap's own folders: the program; the model unless kept; transcripts only with --purge
program=() models=() sessions=()
data_dirs=("$PREFIX"); [ "$APP_DATA" = "$PREFIX" ] || data_dirs+=("$APP_DATA")
for dir in "${data_dirs[@]}"; do
  [ -d "$dir" ] || continue
  for entry in "$dir"/* "$dir"/.[!.]*; do
    exists "$entry" || continue
    case "$(basename "$entry")" in
      sessions) sessions+=("$entry") ;;
      models) models+=("$entry") ;;
      *) program+=("$entry") ;;
    esac
  done
done

# What voxcap's runs left in the temporary folder: vLLM's rendezvous files (vllm_dist_*, kept in
# voxcap-<uid> by voxcap's processes) and the working folders of runs that were killed. Only
# this user's, only voxcap's names, and none while a voxcap of any install (a checkout's, a
# test's) still runs with this temporary folder: its engine reads them.
voxcap_here() {  # the pid of a voxcap process (not this script) whose temporary folder is ours
  local f pid tmp
  for f in $(grep -lsF voxcap /proc/[0-9]*/cmdline 2>/dev/null); do
    pid=${f#/proc/}; pid=${pid%/cmdline}
    [ "$pid" != "$$" ] || continue
    grep -qsF uninstall.sh "$f" && continue
    tmp=$( { tr '\0' '\n' <"/proc/$pid/environ" | sed -n 's/^TMPDIR=//p'; } 2>/dev/null) || continue
    [ "${tmp:-/tmp}" -ef "$TMP_ROOT" ] && { echo "$pid"; return 0; }
  done
  return 1
}
temporary=()
for entry in "$TMP_ROOT/voxcap-$(id -u)" "$TMP_ROOT"/voxcap-engine-* "$TMP_ROOT"/voxcap-serve-stages-* \
             "$TMP_ROOT"/voxcap-ec-* "$TMP_ROOT"/voxcap-selftest-*; do
  [ -O "$entry" ] && temporary+=("$entry")
done
TEMP_IN_USE=""
if ((${#temporary[@]})) && TEMP_IN_USE=$(voxcap_here); then
  keep "temporary files of voxcap's runs (voxcap is running: process $TEMP_IN_USE)" "${temporary[@]}"
  temporary=()
fi

add "the \`voxcap\` command, the applications-menu entry and the icons" ${launch[@]+"${launch[@]}"}
add "voxcap's program and its Python environment" ${program[@]+"${program[@]}"}
if ((KEEP_MODEL)); then
  keep "the model (--keep-model)" ${models[@]+"${models[@]}"}
else
  add "the downloaded model" ${models[@]+"${models[@]}"}
fi
add "caches (vLLM's compiled code, model views)" "$CACHE_DIR"
add "temporary files of voxcap's runs (vLLM's among them)" ${temporary[@]+"${temporary[@]}"}
if ((PURGE)); then
  add "settings and API keys" "$CONFIG_DIR"
  add "your transcripts (saved sessions)" ${sessions[@]+"${sessions[@]}"}
  add "the logs" "$STATE_DIR"
else
  keep "settings and API keys" "$CONFIG_DIR"
  keep "your transcripts (saved sessions)" ${sessions[@]+"${sessions[@]}"}
  keep "the logs (for a bug report)" "$STATE_DIR"
fi

# ------------------------------------------------------------------------------- say it ----
kib_of() {  # the size of the paths (one a line on stdin) in KiB
  local total=0 kib p
  while IFS= read -r p; do
    kib=$(du -sk -- "$p" 2>/dev/null | cut -f1) || kib=0
    total=$((total + ${kib:-0}))
  done
  echo "$total"
}
human() {  # KiB -> "8.5 GB", "120 MB", "12 KB" (powers of 1000, as file managers show them)
  awk -v k="$1" 'BEGIN { b = k * 1024; split("B KB MB GB TB", u, " "); i = 1
    while (b >= 1000 && i < 5) { b /= 1000; i++ }
    printf(i == 1 || b >= 100 ? "%.0f %s" : "%.1f %s", b, u[i]) }'
}
where() {  # the paths of a group, shortened to one line
  local first n
  first=$(head -n1 <<<"$1"); n=$(grep -c '' <<<"$1")
  [[ "$first" == "$HOME/"* ]] && first="~/${first#"$HOME/"}"
  if ((n > 1)); then printf '%s and %d more' "$first" $((n - 1)); else printf '%s' "$first"; fi
}
SIZES=() total=0
for i in "${!LABELS[@]}"; do
  kib=$(kib_of <<<"${PATHS[i]}"); SIZES+=("$kib"); total=$((total + kib))
done
if ((${#LABELS[@]} == 0)); then
  say "voxcap is not installed here (nothing of it in $PREFIX, $CACHE_DIR or the menu)."
else
  say "Uninstalling voxcap removes ($(human "$total") in all):"
  for i in "${!LABELS[@]}"; do
    say "  $(printf '%8s' "$(human "${SIZES[i]}")")  ${LABELS[i]}: $(where "${PATHS[i]}")"
  done
fi
if ((${#KEPT_LABELS[@]})); then
  say "It keeps:"
  for i in "${!KEPT_LABELS[@]}"; do
    say "  $(printf '%8s' "$(human "$(kib_of <<<"${KEPT_PATHS[i]}")")")  ${KEPT_LABELS[i]}: $(where "${KEPT_PATHS[i]}")"
  done
fi
if ((DRY_RUN)); then
  say "Nothing was removed (--dry-run)."
  exit 0
fi
# a person at a terminal gets the last word (as apt asks); scripts and --yes go on
if ((${#LABELS[@]})) && ! ((YES)) && [ -t 0 ] && [ -t 1 ]; then
  read -r -p "Remove them? [Y/n] " answer || answer=n
  case "$answer" in
    ""|[yY]|[yY][eE][sS]) ;;
    *) echo "Nothing was removed."; exit 1 ;;
  esac
fi

# ------------------------------------------------------------------------------ remove ----
for i in "${!LABELS[@]}"; do
  say "Removing ${LABELS[i]} ($(human "${SIZES[i]}"))…"
  while IFS= read -r p; do
    rm -rf -- "$p"
  done <<<"${PATHS[i]}"
done
if command -v gtk-update-icon-cache >/dev/null 2>&1 && [ -f "$ICON_DIR/index.theme" ]; then
  gtk-update-icon-cache -q -t "$ICON_DIR" >/dev/null 2>&1 || true
fi
# empty folders the installer made (never the shared ones' parents beyond these)
for d in "$ICON_DIR"/*/apps "$ICON_DIR"/* "$ICON_DIR" "$DATA_HOME/icons" "$APPS_DIR" "$BIN_DIR" \
         "${data_dirs[@]}"; do
  [ -d "$d" ] && rmdir -- "$d" 2>/dev/null || true
done

if ((${#LABELS[@]})); then
  say "voxcap is uninstalled ($(human "$total") freed)."
fi
for i in "${!KEPT_LABELS[@]}"; do
  case "${KEPT_LABELS[i]}" in
    settings*) say "  Your settings and API keys are kept in $(where "${KEPT_PATHS[i]}") (a later install uses them; uninstall.sh --purge deletes them)." ;;
    *transcripts*) say "  Your transcripts are kept in $(where "${KEPT_PATHS[i]}") (uninstall.sh --purge deletes them)." ;;
    "the logs"*) say "  The logs are kept in $(where "${KEPT_PATHS[i]}") for a bug report (uninstall.sh --purge deletes them)." ;;
    "the model"*) say "  The model is kept in $(where "${KEPT_PATHS[i]}")." ;;
  esac
done
exit 0
