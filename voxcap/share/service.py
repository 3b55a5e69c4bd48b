"""Sharing as a front end uses it: the server started, restarted or stopped as the options
change, on a worker thread of its own (so a GUI never waits for a port to be freed).

    sharing = Sharing(hub, session_source=app.current_session)
    sharing.apply(ShareOptions(enabled=True, lan=True, port=8765, token=saved_token),
                  style=page_style(overlay), masker=masker)   # returns at once
    sharing.status()            # ShareStatus: running, url, viewers, problem (message, fix)
    sharing.apply_now(options)  # the same, waited for; raises ShareError (the CLI)
    sharing.stop()

The server subscribes to ``hub`` (the controller's events) while it runs.
"""

from __future__ import annotations

import logging
import queue
import threading
from dataclasses import dataclass, field

from ..captions.masking import Masker
from .obs import ObsCaptions
from .server import DEFAULT_PORT, ShareError, ShareServer

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ShareOptions:
    enabled: bool = False
    lan: bool = False
    port: int = DEFAULT_PORT
    allow_origin: str = ""  # one site, scheme://host[:port] (netaddr.parse_origin)
    token: str = field(default="", repr=False)  # the access token ("" = a new one); a secret
    obs_url: str = ""  # obs-websocket's address: the stream's closed captions ("" = none)
    obs_password: str = field(default="", repr=False)  # a secret: never in a repr or the log
    obs_text: str = "original"  # what OBS gets: "original" or "translation" (obs.ObsCaptions)
    local_token: bool = False  # the token on this computer's address (127.0.0.1) too


@dataclass(frozen=True)
class ShareStatus:
    running: bool = False
    url: str = field(default="", repr=False)  # carries the token
    lan: bool = False
    viewers: int = 0
    problem: str = ""
    fix: str = ""
    obs: str = ""  # OBS closed captions: "" (off), "sending", or what is wrong
    token: bool = False  # the address carries an access token


class Sharing:
    def __init__(self, hub, session_source=None, on_obs=None, **server_kw) -> None:
        self.hub = hub
        self.session_source = session_source
        self.on_obs = on_obs  # on_obs(state, problem): OBS's state changed (its own thread)
        self.server_kw = server_kw  # extra ShareServer arguments (tests: bind, limits)
        self.server: ShareServer | None = None
        self.obs: ObsCaptions | None = None
        self.options = ShareOptions()
        self._style: dict | None = None
        self._masker: Masker | None = None
        self._problem: tuple[str, str] = ("", "")
        self._lock = threading.Lock()
        self._cmds: queue.Queue = queue.Queue()
        self._worker = threading.Thread(target=self._run, daemon=True, name="voxcap-share-ctl")
        self._worker.start()

    # ---------------------------------------------------------------- any thread ----
    def apply(self, options: ShareOptions, style: dict | None = None, masker: Masker | None = None) -> None:
        self._cmds.put((self._apply, (options, style, masker), None))

    def apply_now(self, options: ShareOptions, style: dict | None = None, masker: Masker | None = None,
                  timeout: float = 20.0) -> ShareStatus:
        done: queue.Queue = queue.Queue()
        self._cmds.put((self._apply, (options, style, masker), done))
        try:
            error = done.get(timeout=timeout)
        except queue.Empty:
            raise ShareError(f"Sharing did not start within {timeout:.0f} s.",
                             "see the log (voxcap doctor says where it is)") from None
        if error is not None:
            raise error
        return self.status()

    def set_style(self, style: dict) -> None:
        self._style = style
        server = self.server
        if server is not None:
            server.call(server.feed.set_style, style)

    def set_masker(self, masker: Masker | None) -> None:
        self._masker = masker
        if self.obs is not None:
            self.obs.set_masker(masker)
        server = self.server
        if server is not None:
            server.call(server.feed.set_masker, masker)

    def status(self) -> ShareStatus:
        with self._lock:
            server, problem, obs = self.server, self._problem, self.obs
        obs_line = ""
        if obs is not None:
            obs_line = obs.problem or (f"{obs.state} ({obs.sent} captions sent)"
                                       if obs.state == "sending" else obs.state + "…")
        if server is None or not server.running:
            return ShareStatus(problem=problem[0], fix=problem[1], obs=obs_line)
        return ShareStatus(True, server.url, server.lan, server.viewers, *problem, obs=obs_line,
                           token=bool(server.token))

    @property
    def token(self) -> str:
        server = self.server
        return server.token if server is not None else ""

    def stop(self, timeout: float = 10.0) -> None:
        done: queue.Queue = queue.Queue()
        self._cmds.put((self._stop, (), done))
        try:
            done.get(timeout=timeout)
        except queue.Empty:
            log.warning("share: stopping took longer than %.0f s", timeout)

    # ------------------------------------------------------------------- worker ----
    def _run(self) -> None:
        while True:
            fn, args, done = self._cmds.get()
            error = None
            try:
                fn(*args)
            except ShareError as exc:
                log.warning("share: %s", exc.message)
                error = exc
                with self._lock:
                    self._problem = (exc.message, exc.fix)
            except Exception as exc:  # reported, sharing stays off
                log.exception("share: could not apply the settings")
                error = ShareError(f"Sharing failed: {exc!r}", "see the log")
                with self._lock:
                    self._problem = (error.message, error.fix)
            if done is not None:
                done.put(error)

    def _apply(self, options: ShareOptions, style, masker) -> None:
        if style is not None:
            self._style = style
        self._masker = masker
        self._apply_obs(options)
        web = (options.enabled, options.lan, options.port, options.allow_origin, options.token,
               options.local_token)
        old = self.options
        self.options = options
        running = self.server is not None and self.server.running
        if running and web == (old.enabled, old.lan, old.port, old.allow_origin, old.token,
                               old.local_token):
            self.set_style(self._style or {})
            self.set_masker(masker)
            return
        self._stop_server()
        if not options.enabled:
            return
        server = ShareServer(port=options.port, lan=options.lan, token=options.token,
                             require_token=options.local_token,
                             allow_origin=options.allow_origin,
                             session_source=self.session_source, masker=self._masker,
                             style=self._style, **self.server_kw)
        server.start()  # raises ShareError: shown, sharing stays off
        self.hub.subscribe(server.post)
        with self._lock:
            self.server, self._problem = server, ("", "")

    def _apply_obs(self, options: ShareOptions) -> None:
        old = self.obs
        if old is not None and (old.url, old.password, old.text) == (
                options.obs_url, options.obs_password, options.obs_text) \
                and old.state != "refused":  # a refused password: applying tries once more
            return
        if old is not None:
            self.hub.unsubscribe(old.post)
            old.stop()
        obs = None
        if options.obs_url:
            obs = ObsCaptions(options.obs_url, options.obs_password, masker=self._masker,
                              on_change=self.on_obs, text=options.obs_text).start()
            self.hub.subscribe(obs.post)
        with self._lock:
            self.obs = obs

    def _stop(self) -> None:
        self._apply_obs(ShareOptions())
        self._stop_server()

    def _stop_server(self) -> None:
        server = self.server
        if server is not None:  # shown as running until its port is free
            self.hub.unsubscribe(server.post)
            server.stop()
        with self._lock:
            self.server, self._problem = None, ("", "")
