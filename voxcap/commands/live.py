"""``voxcap live``: headless live captions from system audio and/or the microphone.

A front end on the session controller (``commands.terminal_frontend``): captions go to stdout as
they arrive, capture events (device lost/back, interruptions, losses) to stderr as one line
each. With ``both``, system audio and the microphone are two engine streams, "Them" and "You".
Ctrl-C (or ``--duration``, SIGTERM, SIGHUP) stops capturing, lets the engine flush the words it
still holds, and exits; a second Ctrl-C gives up on them, a second SIGTERM or SIGHUP leaves at once.
"""

from __future__ import annotations

import os

from ..app.settings import AppSettings, ShareSettings
from ..app.sources import AudioSources
from ..app.translation_settings import ORIGINAL
from ..errors import ConfigError
from ..settings_schema import add_setting_flags
from ..share import ShareOptions, Sharing
from .options import engine_settings, settings_from_flags
from .terminal_frontend import CaptionRun, add_run_options


def add_parser(sub) -> list[str]:
    p = sub.add_parser("live", help="caption system audio and/or the microphone live",
                       description="Capture system audio, the microphone, both, or a named device "
                                   "and print captions as they arrive (capture events on stderr). "
                                   "Ctrl-C flushes and exits.")
    add_setting_flags(p, AppSettings, ["source", "echo_cancel"],
                      more_help={"source": " (default: system)"})
    p.add_argument("--duration", type=float, default=None, metavar="S",
                   help="stop after S seconds (default: until Ctrl-C)")
    g = p.add_argument_group("share captions (a page for OBS, a phone, programs)")
    add_setting_flags(g, ShareSettings, ["port", "lan", "local_token", "allow_origin", "obs_url",
                                         "obs_text"])
    g.add_argument("--obs-password-env", metavar="VAR",
                   help="environment variable holding obs-websocket's password (never logged)")
    add_run_options(p)
    return ["live"]


def run(args) -> int:
    chosen = settings_from_flags(args)
    audio = AudioSources()
    audio.echo_cancel = chosen.echo_cancel
    if args.duration is not None and args.duration <= 0:
        raise ConfigError(f"--duration must be positive, not {args.duration:g}",
                          "give the seconds to capture, or leave it out to run until Ctrl-C")
    resolved = audio.resolve(chosen.source)  # before the engine's long start: no sound server...
    share = chosen.share  # the share flags given, checked as the settings are (settings.py)
    if args.share is None and (args.share_lan or args.share_allow_origin or args.share_token):
        raise ConfigError("--share-lan, --share-token and --share-allow-origin need --share.",
                          "add --share (or --share PORT)")
    if share.obs_text != ORIGINAL and not (args.obs_captions and chosen.translation.translate_to):
        raise ConfigError("--obs-text translation needs --obs-captions and --translate-to.",
                          "add them, or leave --obs-text out")
    cap = CaptionRun(args, engine_settings(args, max_streams=len(resolved)), audio, name="live")
    for spec, description in resolved:
        cap.term.line(f"source: {spec.label}: {description!r}")
    sharing = start_sharing(args, cap, chosen)
    try:
        result = cap.run(chosen.source, args.duration)
    finally:
        if sharing is not None:
            sharing.stop()
    if result.deltas:
        cap.term.line(f"live: {cap.lag_line()}")
    return cap.finish(labelled=True)


def start_sharing(args, cap: CaptionRun, chosen: AppSettings) -> Sharing | None:
    """The caption page and OBS as the flags ask, before the engine (a busy port fails now),
    masked as the terminal and the files are (--mask-profanity), translated lines shown as
    the overlay would (--translate-to); None: not asked for."""
    share = chosen.share
    if args.share is None and not args.obs_captions:
        return None

    def obs_said(state: str, problem: str) -> None:
        if state == "refused":  # said once: it is not tried again
            cap.term.line(f"share: {problem} (here: --obs-password-env VAR names the "
                          "environment variable that holds it)")
    sharing = Sharing(cap.hub, session_source=cap.ctl.journal_session, on_obs=obs_said)
    password = os.environ.get(args.obs_password_env, "") if args.obs_password_env else ""
    status = sharing.apply_now(ShareOptions(
        args.share is not None, share.lan, share.port, share.allow_origin,
        obs_url=share.obs_url if args.obs_captions else "", obs_password=password,
        obs_text=share.obs_text, local_token=share.local_token),
        style={"translation": chosen.translation.shown()}, masker=cap.out_options["masker"])
    if status.running:
        cap.term.line(f"share: captions at {status.url}" + (
            " (this network; the address carries its access token)" if status.lan else
            " (the address carries its access token)" if status.token else
            " (this computer: any user or program here can read them; --share-token "
            "asks for a token)"))
    if args.obs_captions:
        cap.term.line(f"share: closed captions to OBS at {args.obs_captions}")
    return sharing
