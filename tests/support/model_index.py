"""A loopback stand-in for Argos Translate's package index and its file server (no network
here): ``index.json`` listing the packages it serves, range requests, and a slow mode so a test
can cancel mid-file."""

from __future__ import annotations

import hashlib
import http.server
import json
import threading
import time
from pathlib import Path


class ModelIndexServer(http.server.ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.files: dict[str, bytes] = {}
        self.entries: list[dict] = []
        self.delay_s = 0.0  # per 64 KiB chunk
        self.ranges: list[str] = []
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    @property
    def index_url(self) -> str:
        return f"{self.url}/index.json"

    def add(self, archive: Path, source: str, target: str, *, checksum: bool = True,
            size: bool = True) -> dict:
        data = archive.read_bytes()
        self.files[archive.name] = data
        entry = {"type": "translate", "from_code": source, "to_code": target,
                 "package_version": "1.0", "argos_version": "1.9.0", "code": archive.stem,
                 "links": [f"{self.url}/files/{archive.name}"]}
        if size:
            entry["size"] = len(data)
        if checksum:
            entry["sha256"] = hashlib.sha256(data).hexdigest()
        self.entries.append(entry)
        return entry

    def close(self) -> None:
        self.shutdown()
        self.server_close()


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        server: ModelIndexServer = self.server  # type: ignore[assignment]
        if self.path == "/index.json":
            self._send(200, json.dumps(server.entries).encode())
            return
        name = self.path.removeprefix("/files/")
        data = server.files.get(name)
        if data is None:
            self._send(404, b"not found")
            return
        start = 0
        header = self.headers.get("Range")
        if header:
            server.ranges.append(header)
            start = int(header.removeprefix("bytes=").split("-")[0])
        self.send_response(206 if header else 200)
        self.send_header("Content-Length", str(len(data) - start))
        self.end_headers()
        try:
            for i in range(start, len(data), 1 << 16):
                self.wfile.write(data[i:i + (1 << 16)])
                self.wfile.flush()
                if server.delay_s:
                    time.sleep(server.delay_s)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _send(self, code: int, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
