"""A web page of another site that tries to use a caption server on 127.0.0.1 without reading it
(no CORS needed): it frames the caption page, points images at the feed (each would hold a
viewer slot while the page is open) and fetches the transcript in a no-cors loop (each would
make voxcap render the whole session). Served from another loopback address (127.0.0.2), so
the browser treats it as a different site; nothing leaves loopback.

    with OtherSite(target_port) as site:        # serves on 127.0.0.2
        browser.get(site.url)
        site.fetches(browser)                    # no-cors fetches the page has made so far
"""

from __future__ import annotations

import http.server
import threading

ADDRESS = "127.0.0.2"
IMAGES = 6


def page(target: str, images: int = IMAGES) -> str:
    imgs = "".join(f'<img src="{target}/events?i={i}" width=1 height=1>' for i in range(images))
    return f"""<!DOCTYPE html><title>another site</title>
<iframe id="framed" src="{target}/" width="400" height="200"></iframe>{imgs}
<a id="link" href="{target}/">the caption page</a>
<script>
window.fetches = 0;
(async () => {{
  for (;;) {{
    try {{ await fetch("{target}/captions.vtt?n=" + window.fetches, {{mode: "no-cors"}}); }}
    catch (e) {{}}
    window.fetches += 1;
    await new Promise(r => setTimeout(r, 20));
  }}
}})();
</script>"""


class OtherSite:
    def __init__(self, target_port: int, target_host: str = "127.0.0.1") -> None:
        html = page(f"http://{target_host}:{target_port}").encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("content-type", "text/html; charset=utf-8")
                self.send_header("content-length", str(len(html)))
                self.end_headers()
                self.wfile.write(html)

            def log_message(self, *args):
                pass
        self.httpd = http.server.ThreadingHTTPServer((ADDRESS, 0), Handler)
        self.url = f"http://{ADDRESS}:{self.httpd.server_port}/"
        self.origin = self.url.rstrip("/")
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True,
                                        name="test-other-site")

    def __enter__(self) -> OtherSite:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    @staticmethod
    def fetches(browser) -> int:
        return browser.execute_script("return window.fetches || 0")
