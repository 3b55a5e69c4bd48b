"""Sharing captions as the app runs it: the caption server started, restarted or stopped for the
settings (``share.Sharing`` does that off the GUI thread), and how it is doing shown on the
main window and in the Settings dialog's share panel while that is open."""

from __future__ import annotations

from collections.abc import Callable

from ...app.settings import AppSettings
from ...captions.masking import make_masker
from ...share import ShareOptions, Sharing, new_token, page_style


class SharingController:
    def __init__(self, hub, window, *, settings: Callable[[], AppSettings],
                 save: Callable[[], None], session_source, share_panel: Callable[[], object]) -> None:
        self.service = Sharing(hub, session_source=session_source)
        self.window = window
        self.settings = settings  # the app's settings now
        self.save = save
        self.share_panel = share_panel  # the open Settings dialog's share panel, or None
        self._problem = ""

    def apply(self) -> None:
        """Start, restart or stop the caption server for the settings (returns at once)."""
        settings = self.settings()
        sh = settings.share
        if sh.enabled and (sh.lan or sh.local_token) and not sh.token:
            sh.token = new_token()  # kept: links and QR codes stay valid across restarts
            self.save()
        options = ShareOptions(sh.enabled, sh.lan, sh.port, sh.allow_origin, sh.token,
                               sh.obs_url if sh.obs else "", sh.obs_password,
                               local_token=sh.local_token)
        self.service.apply(options, style=page_style(settings.overlay),
                           masker=make_masker(settings.mask_profanity))

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
