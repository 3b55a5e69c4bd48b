"""Captions on other screens: a caption page and feed served from the app, no Qt in here.

One job per module:

- ``feed``     ``CaptionFeed``: the controller's events -> caption lines -> JSON messages, one
               bounded queue per viewer (a slow viewer skips to a snapshot, never holds up).
- ``guard``    the ASGI middleware every request passes: GET only, no upgrades, Host check (no
               DNS rebinding), the access token (LAN sharing, or asked for on 127.0.0.1), other
               sites' Origin refused; the rate-limited log of what requests cause.
- ``connections`` what one connection may hold: a request deadline, a head size, connections
               per address and in all (idle ones make room), a vanished peer's timeout.
- ``server``   ``ShareServer``: Starlette routes (page, Server-Sent Events, TXT/VTT) served by
               uvicorn on a ``loop_thread.LoopThread``.
- ``obs``      ``ObsCaptions``: the captions into OBS Studio's stream (obs-websocket).
- ``service``  ``Sharing``: the server started/restarted/stopped as a front end's options change.
- ``style``    the overlay's style settings as the page's defaults.
- ``qr``       the address as a QR code (PNG).
- ``page.html`` the caption page (its script and style inline, pinned by the CSP).
"""

from .server import DEFAULT_PORT, MAX_VIEWERS, ShareError, ShareServer, lan_address, new_token
from .service import ShareOptions, ShareStatus, Sharing
from .style import page_style

__all__ = ["DEFAULT_PORT", "MAX_VIEWERS", "ShareError", "ShareOptions", "ShareServer",
           "ShareStatus", "Sharing", "lan_address", "new_token", "page_style"]
