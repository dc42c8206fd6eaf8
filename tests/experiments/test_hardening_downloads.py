"""Issue 11, class 7: downloads time out soon with a clear message and never leave a
partial file where the loader looks (not even when the process is killed)."""

import hashlib
import os
import subprocess
import sys
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from lib.experiments import data
from lib.experiments.data import DATA_ENV, DataFile, DataFileError, fetch
from tests._http import Route, serve

PAYLOAD = b"hardening payload\n" * 200
SHA = hashlib.sha256(PAYLOAD).hexdigest()


def _files_where_the_loader_looks(cache: Path) -> list:
    """Every file of the cache outside the partial-download folder."""
    if not cache.exists():
        return []
    return [p for p in cache.rglob("*") if p.is_file() and data.PARTIAL_DIR not in p.parts]


def test_the_default_timeouts_are_short():
    assert data.DOWNLOAD_TIMEOUT <= 20  # was 60 s per file
    assert data.DOWNLOAD_DEADLINE <= 600


def test_a_stalled_server_times_out_with_a_clear_message(cache, monkeypatch):
    monkeypatch.setattr(data, "DOWNLOAD_TIMEOUT", 0.3)
    with serve({"/slow.txt": Route(PAYLOAD, delay=2.0)}) as (base, _):
        start = time.monotonic()
        with pytest.raises(DataFileError, match=r"timed out.*DOWNLOAD_TIMEOUT") as err:
            fetch(DataFile("test/small.txt", SHA, base + "/slow.txt"))
        assert time.monotonic() - start < 1.8
    assert SHA in str(err.value) and "not found locally" in str(err.value)
    assert _files_where_the_loader_looks(cache) == []


class _Trickle(BaseHTTPRequestHandler):
    """Sends the payload a few bytes at a time: every wait is short, the transfer endless."""

    def do_GET(self):  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Length", str(len(PAYLOAD)))
        self.end_headers()
        try:
            for i in range(0, len(PAYLOAD), 8):
                self.wfile.write(PAYLOAD[i:i + 8])
                self.wfile.flush()
                time.sleep(0.05)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args):
        pass


@pytest.fixture
def trickle():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Trickle)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    host, port = server.server_address[:2]
    yield f"http://{host}:{port}/trickle.txt"
    server.shutdown()


def test_a_trickling_transfer_hits_the_deadline(cache, monkeypatch, trickle):
    monkeypatch.setattr(data, "DOWNLOAD_TIMEOUT", 1.0)
    monkeypatch.setattr(data, "DOWNLOAD_DEADLINE", 0.5)
    start = time.monotonic()
    with pytest.raises(DataFileError, match="DOWNLOAD_DEADLINE"):
        fetch(DataFile("test/small.txt", SHA, trickle))
    assert time.monotonic() - start < 3  # the full trickle takes 22 s
    assert _files_where_the_loader_looks(cache) == []
    assert list((cache / data.PARTIAL_DIR).glob("*")) == []  # cleaned up on the way out


def test_a_killed_download_leaves_nothing_where_the_loader_looks(cache, trickle, tmp_path):
    script = textwrap.dedent(f"""
        import sys
        from lib.experiments.data import DataFile, fetch
        print("started", flush=True)
        fetch(DataFile("test/small.txt", {SHA!r}, {trickle!r}))
    """)
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg"))
    env.pop(DATA_ENV, None)
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                            cwd=Path(__file__).resolve().parents[2])
    try:
        assert proc.stdout.readline().strip() == b"started"
        partial = cache / data.PARTIAL_DIR
        for _ in range(200):  # wait until the transfer is under way
            if partial.exists() and any(partial.glob("*.part")):
                break
            time.sleep(0.05)
        else:
            pytest.fail("the download did not start")
    finally:
        proc.kill()  # SIGKILL: no finally clause of the child runs
        proc.wait()
    assert _files_where_the_loader_looks(cache) == []  # the loader only looks outside .partial
    leftovers = list((cache / data.PARTIAL_DIR).glob("*.part"))
    assert leftovers  # the killed download's partial file, where nobody reads it
    # The next download removes stale leftovers (older than deadline + timeout).
    old = time.time() - data.DOWNLOAD_DEADLINE - data.DOWNLOAD_TIMEOUT - 10
    for p in leftovers:
        os.utime(p, (old, old))
    with serve({"/small.txt": Route(PAYLOAD)}) as (base, _):
        assert fetch(DataFile("test/small.txt", SHA, base + "/small.txt")) == PAYLOAD
    assert list((cache / data.PARTIAL_DIR).glob("*")) == []
    assert _files_where_the_loader_looks(cache) == [cache / "test" / "small.txt"]
