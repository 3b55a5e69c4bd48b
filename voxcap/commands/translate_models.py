"""``voxcap translate-models list|download|remove``: the CPU translation models (voxcap.translate).

    voxcap translate-models list                 installed pairs, their disk size, the folder
    voxcap translate-models list --available     also what the index offers (and its sizes)
    voxcap translate-models download fr-en en-de [--from PATH] [--index URL] [--dir DIR]
    voxcap translate-models remove fr-en

``download`` resumes a broken download when run again; ``--from PATH`` installs an
``.argosmodel`` file, or the pairs' files from a folder, instead (an offline machine). The
index is Argos Translate's (or ``$VOXCAP_TRANSLATE_INDEX``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from ..errors import ConfigError


def add_parser(sub) -> list[str]:
    from ..translate.models import DEFAULT_INDEX, INDEX_ENV, default_models_dir

    p = sub.add_parser("translate-models", help="list, download or remove translation models",
                       description="Translation models for translated captions (--translate-to): "
                                   "OPUS-MT models in Argos Translate's format, run on the CPU. "
                                   "A pair is SOURCE-TARGET (fr-en); a missing pair is made of "
                                   "two through English (fr-en and en-de for French to German).")
    p.add_argument("action", choices=("list", "download", "remove"))
    p.add_argument("pairs", nargs="*", metavar="PAIR", help="e.g. fr-en (download, remove)")
    p.add_argument("--dir", default=str(default_models_dir()),
                   help=f"the models folder (default {default_models_dir()}, where voxcap looks)")
    p.add_argument("--index", metavar="URL",
                   help=f"the package index (default ${INDEX_ENV} or {DEFAULT_INDEX})")
    p.add_argument("--from", dest="from_path", metavar="PATH",
                   help="install this .argosmodel file (its pair; PAIR may be left out), or the "
                        "pairs' files from this folder, instead of downloading (an offline install)")
    p.add_argument("--available", action="store_true", help="list: also the index's pairs")
    return ["translate-models"]


def _pair(text: str) -> tuple[str, str]:
    source, sep, target = text.partition("-")
    if not sep or not source or not target:
        raise ConfigError(f"{text!r} is not a language pair.", "write it SOURCE-TARGET, e.g. fr-en")
    return source.lower(), target.lower()


def _list(args, models: Path) -> int:
    from ..translate.models import fetch_index
    from ..translate.package import installed_pairs

    pairs = installed_pairs(models)
    print(f"Installed in {models}:" if pairs else f"No translation models in {models}.")
    for pair in pairs.values():
        print(f"  {pair.name:8} {pair.disk_bytes() / 1e6:7.1f} MB  version {pair.version or '?'}")
    if args.available:
        print("Available:")
        for entry in fetch_index(args.index):
            size = f"{entry.size / 1e6:7.1f} MB" if entry.size else "   size ?"
            mark = "  installed" if (entry.source, entry.target) in pairs else ""
            print(f"  {entry.name:8} {size}  version {entry.version}{mark}")
    return 0


def _progress(name: str):
    last = [0.0]

    def show(p) -> None:
        now = time.monotonic()
        if p.stage == "downloading" and now - last[0] < 0.5:
            return
        last[0] = now
        total = f" of {p.total_bytes / 1e6:.1f} MB" if p.total_bytes else " MB"
        print(f"\r{name}: {p.stage} {p.done_bytes / 1e6:.1f}{total}   ", end="", file=sys.stderr,
              flush=True)
    return show


def _download(args, models: Path) -> int:
    from ..translate.models import PackageDownload, fetch_index, find_entry, install_archive

    wanted = [_pair(p) for p in args.pairs]
    source_path = Path(args.from_path).expanduser() if args.from_path else None
    if source_path is not None and not source_path.exists():
        raise ConfigError(f"{source_path} does not exist.",
                          "give the .argosmodel file, or the folder you copied the models to")
    if source_path is not None and source_path.is_file():
        pair = install_archive(source_path, models)
        print(f"Installed {pair.name} in {pair.folder}")
        others = [f"{s}-{t}" for s, t in wanted if (s, t) != (pair.source, pair.target)]
        if others:
            raise ConfigError(f"{source_path.name} holds {pair.name}, not {', '.join(others)}.",
                              "give each pair's .argosmodel file, or download without --from")
        return 0
    if not wanted:
        raise ConfigError("Name the pairs to download.", "e.g. voxcap translate-models download fr-en")
    if source_path is not None:
        for source, target in wanted:
            found = sorted(source_path.glob(f"translate-{source}_{target}*.argosmodel"))
            if not found:
                raise ConfigError(f"{source_path} has no translate-{source}_{target}-*.argosmodel "
                                  "file.", "copy the pair's .argosmodel file there, or download "
                                           "without --from")
            pair = install_archive(found[-1], models)
            print(f"Installed {pair.name} in {pair.folder}")
        return 0
    index = fetch_index(args.index)
    for source, target in wanted:
        download = PackageDownload(find_entry(index, source, target), models,
                                   on_progress=_progress(f"{source}-{target}"))
        try:
            pair = download.run()
        except KeyboardInterrupt:
            print("\ninterrupted: run the same command again to resume", file=sys.stderr)
            return 130
        print(file=sys.stderr)
        print(f"Installed {pair.name} ({pair.disk_bytes() / 1e6:.1f} MB) in {pair.folder}")
    return 0


def _remove(args, models: Path) -> int:
    from ..translate.package import installed_pairs, remove_package

    pairs = installed_pairs(models)
    for text in args.pairs:
        key = _pair(text)
        if key not in pairs:
            have = ", ".join(p.name for p in pairs.values()) or "none"
            raise ConfigError(f"No {text} translation model is installed in {models}.",
                              f"installed: {have}")
        remove_package(pairs[key])
        print(f"Removed {text}")
    return 0


def run(args) -> int:
    models = Path(args.dir).expanduser()
    action = {"list": _list, "download": _download, "remove": _remove}[args.action]
    return action(args, models)
