"""A local stand-in for the Hugging Face Hub (no network here): the two routes the model
download uses, serving slowly on request so a test can watch or cancel mid-file."""

from __future__ import annotations

import hashlib
import http.server
import json
import threading
import time

from voxcap.app.download import MODEL_REPO

FILES = {"params.json": b'{"dim": 8}', "tekken.json": b'{"audio": {}}',
         "consolidated.safetensors": bytes(range(256)) * 4096}  # 1 MiB


class FakeHub(http.server.ThreadingHTTPServer):
    """The two routes the downloader uses; serves slowly so a test can cancel mid-file."""

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.delay = 0.0
        self.ranges: list[str] = []
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        hub = self.server
        if self.path == f"/api/models/{MODEL_REPO}/tree/main":
            tree = [{"type": "file", "path": "README.md", "size": 3}]
            for name, data in FILES.items():
                entry = {"type": "file", "path": name, "size": len(data)}
                if name.endswith(".safetensors"):
                    entry["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data)}
                tree.append(entry)
            body = json.dumps(tree).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        prefix = f"/{MODEL_REPO}/resolve/main/"
        name = self.path[len(prefix):] if self.path.startswith(prefix) else ""
        if name not in FILES:
            self.send_error(404)
            return
        data = FILES[name]
        start = 0
        rng = self.headers.get("Range")
        if rng:
            hub.ranges.append(rng)
            start = int(rng.split("=")[1].split("-")[0])
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(data) - start))
        self.end_headers()
        try:
            for i in range(start, len(data), 65536):
                self.wfile.write(data[i:i + 65536])
                time.sleep(hub.delay)
        except (BrokenPipeError, ConnectionResetError):
            pass
