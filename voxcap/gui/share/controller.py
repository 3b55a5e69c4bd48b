"""Sharing captions as the app runs it: the caption server started, restarted or stopped for the
settings it uses (``share.*``, the overlay's look for the page, the masking) at each application
of settings that ``SettingsChanges`` announces (``share.Sharing`` does the work off the GUI
thread); how it is doing shown on the main window and in the Settings dialog's share panel while
that is open. The access token is window state: made here when first needed, kept across
restarts."""

from __future__ import annotations

from collections.abc import Callable

from ...app.settings import AppSettings
from ...app.settings_changes import SettingsChanges
from ...app.translation_settings import ORIGINAL
from ...app.window_state import WindowState
from ...captions.masking import make_masker
from ...share import ShareOptions, Sharing, new_token, page_style
from .panel import SharePanel


class SharingController:
    def __init__(self, hub, window, *, settings: Callable[[], AppSettings], state: WindowState,
                 save_state: Callable[[], None], changes: SettingsChanges, session_source,
                 share_panel: Callable[[], SharePanel | None]) -> None:
        self.service = Sharing(hub, session_source=session_source)
        self.window = window
        self.settings = settings  # the app's settings now
        self.state = state  # holds the token
        self.save_state = save_state
        self.share_panel = share_panel  # the open Settings dialog's share panel, or None
        self._problem = ""
        # every Apply, changed or not: a server or an OBS password that failed is tried again
        # (the service compares: what runs with the same options is left alone)
        changes.subscribe(lambda _change: self.apply())

    def apply(self) -> None:
        """Start, restart or stop the caption server for the settings (returns at once)."""
        settings = self.settings()
        sh = settings.share
        if sh.enabled and (sh.lan or sh.local_token) and not self.state.share_token:
            self.state.share_token = new_token()  # kept: links and QR codes stay valid
            self.save_state()
        translating = bool(settings.translation.translate_to)
        options = ShareOptions(sh.enabled, sh.lan, sh.port, sh.allow_origin, self.state.share_token,
                               sh.obs_url if sh.obs else "", sh.obs_password,
                               sh.obs_text if translating else ORIGINAL,
                               local_token=sh.local_token)
        self.service.apply(options, style=page_style(settings.overlay, settings.translation.shown()),
                           masker=make_masker(settings.mask_profanity))

    def new_address(self) -> None:
        """Settings → Share captions → "New address": a new token (the old links and QR codes
        stop working once the settings being applied start sharing with it)."""
        self.state.share_token = new_token()
        self.save_state()

    def switch_off(self) -> None:
        """Viewers disconnected and the port freed, in the background (the app is leaving)."""
        self.service.apply(ShareOptions())

    def show_status(self) -> None:
        status = self.service.status()
        panel = self.share_panel()
        if panel is not None:
            panel.show_status(status)
        self.window.set_sharing(status.running, status.viewers, status.lan)
        if status.problem != self._problem:
            self._problem = status.problem
            if status.problem:
                self.window.show_notice(f"Sharing captions: {status.problem}", status.fix,
                                        cause="share")
            else:
                self.window.clear_notice("share")
