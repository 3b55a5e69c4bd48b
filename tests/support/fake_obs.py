"""Something else answering on OBS's port: a program that speaks obs-websocket 5 just enough to
take voxcap's captions (another user's process that bound 127.0.0.1:4455 first). It may ask for
no password, or send its own salt and challenge to collect the answer, and answers every
request with ``comment`` (e.g. rich text, to see how the app shows it). Loopback only.

    with ObsImpostor(auth=False, comment="<h1>hi</h1>") as fake:
        fake.url                 # ws://127.0.0.1:PORT
        fake.captions            # caption texts it was sent
        fake.answers             # the authentication strings it got
"""

from __future__ import annotations

import asyncio
import json
import threading


class ObsImpostor:
    def __init__(self, auth: bool = False, comment: str = "", port: int = 0) -> None:
        self.auth, self.comment, self.port = auth, comment, port
        self.captions: list[str] = []
        self.answers: list[str] = []
        self.connections = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, daemon=True, name="test-obs-impostor")

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def __enter__(self) -> ObsImpostor:
        self._thread.start()
        assert self._ready.wait(10), "the impostor did not start"
        return self

    def __exit__(self, *exc) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._main())
        self._loop.close()

    async def _main(self) -> None:
        from websockets.asyncio.server import serve

        self._stop = asyncio.Event()
        async with serve(self._session, "127.0.0.1", self.port) as server:
            self.port = server.sockets[0].getsockname()[1]
            self._ready.set()
            await self._stop.wait()

    async def _session(self, ws) -> None:
        from websockets.exceptions import ConnectionClosed

        self.connections += 1
        try:
            await self._talk(ws)
        except ConnectionClosed:
            pass  # the client left (voxcap refused it, or stopped)

    async def _talk(self, ws) -> None:
        hello = {"obsWebSocketVersion": "5.5.0", "rpcVersion": 1}
        if self.auth:
            hello["authentication"] = {"salt": "c2FsdA==", "challenge": "Y2hhbGxlbmdl"}
        await ws.send(json.dumps({"op": 0, "d": hello}))
        identify = json.loads(await ws.recv())
        if "authentication" in identify["d"]:
            self.answers.append(identify["d"]["authentication"])
        await ws.send(json.dumps({"op": 2, "d": {"negotiatedRpcVersion": 1}}))
        async for raw in ws:
            msg = json.loads(raw)
            if msg.get("op") != 6:
                continue
            d = msg["d"]
            if d.get("requestType") == "SendStreamCaption":
                self.captions.append(d["requestData"]["captionText"])
            status = {"result": not self.comment, "code": 100 if not self.comment else 501}
            if self.comment:
                status["comment"] = self.comment
            await ws.send(json.dumps({"op": 7, "d": {"requestType": d.get("requestType"),
                                                     "requestId": d.get("requestId"),
                                                     "requestStatus": status}}))
