"""A loopback HTTP server for vendor files, with Range support and switchable faults."""

from __future__ import annotations

import socket
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@dataclass
class Fault:
    """What the server does wrong for one file name."""

    status: int | None = None  # answer this status instead of the file
    drop_after: int | None = None  # close the connection after this many body bytes
    times: int = 1  # how many requests misbehave before the file is served properly


@dataclass
class ServerState:
    """Files served, faults armed, and every request seen (name, Range header)."""

    root: Path
    faults: dict[str, Fault] = field(default_factory=dict)
    requests: list[tuple[str, str | None]] = field(default_factory=list)


def _handler(state: ServerState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            """Quiet: the test reads `state.requests` instead."""

        def do_GET(self) -> None:
            name = Path(urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)).name
            state.requests.append((name, self.headers.get("Range")))
            fault = state.faults.get(name)
            if fault is not None and fault.times > 0:
                fault.times -= 1
            else:
                fault = None
            path = state.root / name
            if (fault and fault.status) or not path.is_file():
                self.send_error(fault.status if fault and fault.status else 404)
                return
            body = path.read_bytes()
            start = 0
            ranged = self.headers.get("Range")
            if ranged and ranged.startswith("bytes="):
                start = int(ranged.removeprefix("bytes=").split("-")[0])
                if start >= len(body):
                    self.send_error(416)
                    return
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
            else:
                self.send_response(200)
            self.send_header("Content-Length", str(len(body) - start))
            self.end_headers()
            payload = body[start:]
            if fault and fault.drop_after is not None:
                self.wfile.write(payload[: fault.drop_after])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(payload)

    return Handler


@contextmanager
def vendor_server(root: Path) -> Iterator[tuple[str, ServerState]]:
    """Serve `root` on 127.0.0.1 at a free port; yields the base URL and the live state."""
    state = ServerState(root=root)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", state
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def index_server(root: Path) -> Iterator[str]:
    """A PEP 503 "simple" package index: `root/<normalized name>/<files>`, served with the
    directory listings pip reads as project pages. Yields the index URL."""

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            """Quiet: pip's own output says what it fetched."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def raw_server(answer: bytes, *, drip_after: int | None = None
               ) -> Iterator[tuple[str, list[bytes]]]:
    """A loopback server that answers every request with exactly these bytes and closes:
    the malformed answers no HTTP server library would send. With `drip_after`, the bytes
    after that many come one at a time, a few milliseconds apart (a stalling server). Yields
    the base URL and the request heads it received."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    seen: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with connection:
                connection.settimeout(5)
                head = b""
                try:
                    while b"\r\n\r\n" not in head:
                        chunk = connection.recv(4096)
                        if not chunk:
                            break
                        head += chunk
                    seen.append(head)
                    connection.sendall(answer[:drip_after])
                    for at in range(drip_after or len(answer), len(answer)):
                        if stop.wait(0.005):
                            break
                        connection.sendall(answer[at:at + 1])
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", seen
    finally:
        stop.set()
        thread.join()
        listener.close()
