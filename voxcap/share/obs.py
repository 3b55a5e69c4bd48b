"""Captions into OBS Studio's stream as closed captions (CEA-608), through obs-websocket 5
(``SendStreamCaption``; OBS 28 and later have it built in: Tools → WebSocket Server Settings).

    obs = ObsCaptions(OBS_ADDRESS, password="").start()  # a loop thread of its own
    hub.subscribe(obs.post)                                 # the controller's events
    obs.state, obs.problem                                  # "sending", "connecting", "refused"
    obs.stop()

It follows the captions as the caption page does (``feed.CaptionFeed``) and sends the line being
spoken, as it grows, at most every ``interval_s`` (its last ``CAPTION_CHARS`` characters from a
word's start: two rows of a 608 caption). With ``text="translation"`` (``ShareSettings.obs_text``)
it sends each line's translation instead, once the line has ended and its translation has come (a
line found to be in the target language already, as its original); the translation's words are
masked as the original's are. OBS shows it only while it streams; nothing is queued meanwhile
(captions are live or useless). It reconnects with backoff when OBS is not running or restarts. A
password OBS refuses (obs-websocket closes with 4009, "authentication failed"), a password OBS asks
for when none is set, or a server that asks for none when one is set (OBS asks whenever it has one:
this is something else on its port, e.g. another user's program that took it first) is not tried
again: the state is "refused" and ``problem`` says so with the fix, until the settings are applied
again (``Sharing`` then starts a new sender). Without a password, whatever answers on the port gets
the captions; with one, a program that asks for it gets obs-websocket's challenge answer, which a
long random password (OBS generates one) keeps from being guessed offline. The password is never
logged, nor is caption text.

On this computer, nothing at all (captions, the password's answer) goes to a program of another
user that holds the port (obs-websocket's password check is one-way: a program that accepts any
answer would get both): the connected socket's other end is checked first
(``listeners.untrusted_peer``), and such a program is "refused" like an impostor. An OBS on
another computer cannot be checked (obs-websocket has no TLS): whatever answers at that address
gets the captions and the password's answer, as with any plain websocket on a network.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import logging
from urllib.parse import urlsplit

from .. import listeners
from ..loop_thread import LoopThread
from ..netaddr import OBS_ADDRESS
from .feed import CaptionFeed

log = logging.getLogger(__name__)
CAPTION_CHARS = 64
INTERVAL_S = 0.3
RPC_VERSION = 1
ORIGINAL, TRANSLATION = "original", "translation"  # which text OBS gets (ShareSettings.obs_text)
AUTH_FAILED = 4009  # obs-websocket 5's close code for a missing or wrong password
PASSWORD_FIX = ("use the password OBS shows in Tools → WebSocket Server Settings → Show "
                "Connect Info")


NOT_ASKED_FIX = ("in OBS tick Tools → WebSocket Server Settings → Enable Authentication with "
                 "this password, or check the address and port")


OTHER_USER_FIX = ("close that program (OBS on this computer listens as you), or give OBS another "
                  "port in Tools → WebSocket Server Settings and the same port here")


class PasswordRefused(Exception):
    """obs-websocket refused the identification: trying again cannot help."""

    def __init__(self, message: str, fix: str = PASSWORD_FIX) -> None:
        super().__init__(message)
        self.fix = fix


def auth_string(password: str, salt: str, challenge: str) -> str:
    """obs-websocket 5's authentication: base64(sha256(base64(sha256(password + salt)) +
    challenge))."""
    secret = base64.b64encode(hashlib.sha256((password + salt).encode()).digest()).decode()
    return base64.b64encode(hashlib.sha256((secret + challenge).encode()).digest()).decode()


class ObsCaptions:
    def __init__(self, url: str = OBS_ADDRESS, password: str = "", masker=None,
                 interval_s: float = INTERVAL_S, on_change=None, text: str = ORIGINAL) -> None:
        self.url = url
        self.password = password
        self.text = text  # ORIGINAL or TRANSLATION
        self.interval_s = interval_s
        self.on_change = on_change  # called (on the sender's thread) when state/problem change
        self.feed = CaptionFeed(masker=masker, viewer_queue=64)
        self.sent = 0  # captions OBS accepted
        self.attempts = 0  # connections tried
        self.state = "connecting"
        self.problem = ""
        self._stop = asyncio.Event()
        self._thread = LoopThread(self._main, name="voxcap-obs", what="obs: the caption sender",
                                  logger=log)

    def __repr__(self) -> str:  # never the password
        return f"<ObsCaptions {self.url} {self.state} sent={self.sent}>"

    def start(self) -> ObsCaptions:
        self._thread.start()
        return self

    def post(self, event) -> None:
        self._thread.call_soon(self.feed.on_event, event)

    def set_masker(self, masker) -> None:
        self._thread.call_soon(self.feed.set_masker, masker)

    def stop(self, timeout: float = 5.0) -> None:
        self._thread.call_soon(self._stop.set)
        self._thread.join(timeout)

    # ----------------------------------------------------------------------- loop ----
    async def _main(self) -> None:
        wake = asyncio.Event()
        viewer = self.feed.add_viewer(wake.set)
        backoff = 1.0
        while not self._stop.is_set():
            try:
                self.attempts += 1
                await self._session(viewer, wake)
                backoff = 1.0
            except PasswordRefused as exc:
                self._set("refused", f"{exc}: {exc.fix}.")
                log.warning("obs: %s; not trying again until the settings change", exc)
                await self._stop.wait()
                return
            except (TimeoutError, OSError, ValueError) as exc:
                self._set("connecting",
                          f"OBS not reachable at {self.url} ({exc.__class__.__name__})")
                log.info("obs: not connected (%s); again in %.0f s", exc.__class__.__name__,
                         backoff)
            except Exception as exc:  # websockets' closes and protocol errors
                self._set("connecting", f"OBS connection lost ({exc.__class__.__name__})")
                log.info("obs: connection lost", exc_info=True)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), backoff)
            backoff = min(backoff * 2, 15.0)

    def _set(self, state: str, problem: str = "") -> None:
        changed = (state, problem) != (self.state, self.problem)
        self.state, self.problem = state, problem
        if changed and self.on_change is not None:
            try:
                self.on_change(state, problem)
            except Exception:  # a front end's display must not stop captions
                log.exception("obs: the status display failed")

    async def _connect_checked(self):
        """A socket to OBS's address whose other end is not another user's program."""
        parts = urlsplit(self.url)
        try:
            sock = await asyncio.wait_for(asyncio.to_thread(
                listeners.connect_checked, parts.hostname or "", parts.port or 80, 5), 6)
        except listeners.PeerRefused as exc:
            raise PasswordRefused(f"Not sending captions to {self.url}; {exc.why}",
                                  OTHER_USER_FIX) from None
        sock.setblocking(False)
        return sock

    async def _session(self, viewer, wake) -> None:
        from websockets.asyncio.client import connect

        sock = await self._connect_checked()
        async with connect(self.url, sock=sock, open_timeout=5, max_size=2**20) as ws:
            version = await self._identify(ws)
            self._set("sending")
            log.info("obs: connected to obs-websocket %s", version)
            picker = CaptionPicker(self.text)
            picker.latest(viewer.take())  # the session so far is not sent: captions are live
            n = 0
            while not self._stop.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), 1.0)
                wake.clear()
                text = picker.latest(viewer.take())
                if text is None:
                    continue
                n += 1
                await self._send_caption(ws, str(n), text)
                await asyncio.sleep(self.interval_s)  # coalesce: the latest text goes next

    async def _identify(self, ws) -> str:
        """obs-websocket's handshake (its password, if it asks); the version it says it is."""
        from websockets.exceptions import ConnectionClosed

        hello = json.loads(await asyncio.wait_for(ws.recv(), 5))
        identify: dict[str, object] = {"rpcVersion": RPC_VERSION, "eventSubscriptions": 0}
        auth = (hello.get("d") or {}).get("authentication")
        if auth and not self.password:
            raise PasswordRefused("OBS asks for a password and none is set")
        if self.password and not auth:
            raise PasswordRefused("What answers at this address asks for no password, but "
                                  "one is set (OBS asks when it has one)", NOT_ASKED_FIX)
        if auth:
            identify["authentication"] = auth_string(self.password, auth["salt"],
                                                     auth["challenge"])
        await ws.send(json.dumps({"op": 1, "d": identify}))
        try:
            reply = json.loads(await asyncio.wait_for(ws.recv(), 5))
        except ConnectionClosed as exc:
            if exc.rcvd is not None and exc.rcvd.code == AUTH_FAILED:
                raise PasswordRefused("OBS refused the password") from None
            raise
        if reply.get("op") != 2:
            raise ValueError("obs-websocket did not accept the identification")
        return (hello.get("d") or {}).get("obsWebSocketVersion", "?")

    async def _send_caption(self, ws, request_id: str, text: str) -> None:
        await ws.send(json.dumps({"op": 6, "d": {
            "requestType": "SendStreamCaption", "requestId": request_id,
            "requestData": {"captionText": text}}}))
        while True:  # its answer (events are not subscribed: nothing else comes)
            answer = json.loads(await asyncio.wait_for(ws.recv(), 5))
            if answer.get("op") == 7:
                break
        status = answer["d"]["requestStatus"]
        if status.get("result"):
            self.sent += 1
            self._set("sending")
        else:  # e.g. 501 "not streaming": shown, and tried again with the next words
            self._set("sending", f"OBS: {status.get('comment') or status.get('code')}")


def caption_tail(text: str) -> str:
    """The last ``CAPTION_CHARS`` characters of ``text`` from a word's start (the end of a cut
    word reads as another word: "19" of "w1419"); with no space to cut at, the characters."""
    if len(text) <= CAPTION_CHARS:
        return text.lstrip()
    tail = text[-CAPTION_CHARS:]
    if not text[-CAPTION_CHARS - 1].isspace():  # the cut falls inside a word: leave it out
        _, space, rest = tail.partition(" ")
        tail = rest if space and rest.strip() else tail
    return tail.lstrip()


class CaptionPicker:
    """The newest caption text among the page feed's messages, cut to what OBS shows; None
    when none carries new words. The original: the line that grew (or a snapshot's last).
    The translation: a line whose translation changed, so no part of a line goes before it has
    ended and been translated (a line found to be in the target language already: its
    original, as it grows); not again for its share of its sentence's translation."""

    KEPT = 64  # lines whose last text sent is remembered

    def __init__(self, which: str = ORIGINAL) -> None:
        self.which = which
        self._sent: dict[int, str] = {}  # line id -> the translation last sent

    def latest(self, feed_messages) -> str | None:
        text = None
        for raw in feed_messages:
            msg = json.loads(raw)
            if msg["type"] == "snapshot":  # a new session, or behind
                lines, grew = msg["lines"][-1:], True
            elif msg["type"] == "line":
                lines, grew = [msg], bool(msg["added"] or msg["new"])
            else:
                continue
            for line in lines:
                picked = self._pick(line, grew)
                if picked is not None:
                    text = caption_tail(picked)
        return text

    def _pick(self, line: dict, grew: bool) -> str | None:
        if self.which != TRANSLATION:
            return line["text"] if grew else None
        if not line.get("target"):
            return None  # not translated yet
        if line.get("refined") and line["id"] in self._sent:
            return None  # its sentence's translation: the words shown already stand
        shown = line.get("translation") or line["text"]
        if self._sent.get(line["id"]) == shown:
            return None
        self._sent[line["id"]] = shown
        while len(self._sent) > self.KEPT:
            del self._sent[next(iter(self._sent))]
        return shown

