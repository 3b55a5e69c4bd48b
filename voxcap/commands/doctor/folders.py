"""voxcap's folders: writable, with room."""

from __future__ import annotations

import shutil
import tempfile

from .base import (
    FAIL,
    OK,
    WARN,
    Check,
    Context,
)


def check_dirs(ctx: Context, args) -> Check:
    from ... import logs, paths

    title = "Folders"
    details: dict[str, object] = {}
    bad = []
    for what, getter in (("config", paths.config_dir), ("data", paths.data_dir),
                         ("cache", paths.cache_dir), ("state", paths.state_dir)):
        d = getter()
        details[what] = str(d)
        try:
            d.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=d, prefix=".doctor-", delete=True) as fh:
                fh.write(b"ok")
                fh.flush()
        except OSError as exc:
            bad.append(f"{what} folder {d} ({exc.strerror or exc})")
    if bad:
        return Check("dirs", title, FAIL, f"cannot write to {'; '.join(bad)}",
                     "make the folder writable by you (check its owner: `ls -ld FOLDER`), or "
                     "free disk space", details)
    free = shutil.disk_usage(paths.data_dir()).free
    details["data_free_bytes"] = free
    details["log"] = str(logs.log_path())
    summary = (f"config {details['config']}, data {details['data']}, cache {details['cache']}: "
               f"writable; {free / 1e9:.0f} GB free. The log (attach it to a bug report): "
               f"{details['log']}")
    if free < 2e9:
        return Check("dirs", title, WARN, summary + " (little space left for transcripts)",
                     "free disk space", details)
    return Check("dirs", title, OK, summary, "", details)
