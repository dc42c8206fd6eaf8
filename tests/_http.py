"""A local HTTP server on 127.0.0.1 for the download tests (no internet).

``serve(routes)`` starts a threaded server in the background and yields its
base URL. ``routes`` maps a path such as ``"/small.txt"`` to a :class:`Route`:
the status, the body, an optional delay before answering and an optional
``Content-Length`` that differs from the body (a truncated transfer).
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Route:
    body: bytes = b""
    status: int = 200
    delay: float = 0.0
    content_length: int | None = None


@contextlib.contextmanager
def serve(routes: dict[str, Route]):
    hits: dict[str, int] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's naming)
            hits[self.path] = hits.get(self.path, 0) + 1
            route = routes.get(self.path)
            if route is None:
                route = Route(b"not found", status=404)
            if route.delay:
                time.sleep(route.delay)
            try:
                self.send_response(route.status)
                length = (len(route.body) if route.content_length is None
                          else route.content_length)
                self.send_header("Content-Length", str(length))
                self.end_headers()
                self.wfile.write(route.body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

        def log_message(self, *args):  # keep pytest output quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever,
                              kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host}:{port}", hits
    finally:
        server.shutdown()
        server.server_close()
