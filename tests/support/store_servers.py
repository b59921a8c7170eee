"""Real servers on 127.0.0.1 for the store tests: a file server with Range support, and a proxy in
front of another server (moto's S3 server, `s3_server`), both able to inject faults.

Each server records the requests it saw and how many were in flight at once, so tests can
check what a user would notice (fewer round trips, concurrent reads) without mocking a client.
"""

from __future__ import annotations

import http.client
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from s3_server import Moto, MotoProcess

_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")

#: what a fault does to one request: an HTTP status to answer, "truncate" (send half the body
#: and hang up), "drop" (close the connection without an answer), "stall" (answer nothing
#: until the traffic is reset, or `STALL_LIMIT` seconds), "stall-body" (send the headers and
#: half the body, then stall likewise), or one of S3's error answers: "slowdown" (503
#: SlowDown, S3's throttling) or "internal" (500 InternalError)
Fault = int | str

#: the longest a stalled request holds its server thread (a client gives up long before)
STALL_LIMIT = 30.0

#: S3's error answers, as S3 sends them (status, code, message)
S3_ERRORS = {
    "slowdown": (503, "SlowDown", "Please reduce your request rate."),
    "internal": (500, "InternalError", "We encountered an internal error. Please try again."),
}


def s3_error_body(code: str, message: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Error><Code>{code}</Code><Message>{message}</Message>"
        "<RequestId>0000000000000000</RequestId></Error>"
    ).encode()


@dataclass
class Traffic:
    """What a server saw; `faults` are applied to the next requests, first first."""

    requests: list[tuple[str, str, str | None]] = field(default_factory=list)
    #: for each request, the access key id its signature names ("" when unsigned)
    signers: list[str] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    always: Fault | None = None  # applied to every request while set
    delay: float = 0.0  # seconds each answer waits (to make concurrency visible)
    #: bytes per second of answer bodies, all answers sharing one link (None: no cap)
    bandwidth: float | None = None
    link_free_at: float = 0.0
    sent_bytes: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    on_request: Callable[[int], None] | None = None  # called with the request's number
    #: set to let stalled requests go (by `reset`); each reset arms a new one
    released: threading.Event = field(default_factory=threading.Event)

    def stall(self) -> None:
        """Hold a request until the traffic is reset (or `STALL_LIMIT` seconds pass)."""
        self.released.wait(STALL_LIMIT)

    def begin(
        self, method: str, path: str, rng: str | None, authorization: str | None = None
    ) -> Fault | None:
        with self.lock:
            self.requests.append((method, path, rng))
            self.signers.append(_signer(authorization))
            number = len(self.requests)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            fault = self.faults.pop(0) if self.faults else self.always
        if self.on_request is not None:
            self.on_request(number)
        if self.delay:
            time.sleep(self.delay)
        return fault

    def transmit(self, nbytes: int) -> None:
        """Wait for `nbytes` of body to cross the capped link, after those queued before it."""
        with self.lock:
            self.sent_bytes += nbytes
            if not self.bandwidth:
                return
            start = max(time.monotonic(), self.link_free_at)
            self.link_free_at = done = start + nbytes / self.bandwidth
        time.sleep(max(0.0, done - time.monotonic()))

    def end(self) -> None:
        with self.lock:
            self.in_flight -= 1

    def gets(self, needle: str = "") -> list[tuple[str, str, str | None]]:
        with self.lock:
            return [r for r in self.requests if r[0] == "GET" and needle in r[1]]

    def reset(self) -> None:
        with self.lock:
            self.requests.clear()
            self.signers.clear()
            self.faults.clear()
            self.always = None
            self.delay = 0.0
            self.bandwidth = None
            self.sent_bytes = 0
            self.max_in_flight = 0
            self.on_request = None
            self.released.set()
            self.released = threading.Event()


def _signer(authorization: str | None) -> str:
    """The access key id of an AWS signature (`Credential=<id>/<date>/...`), or ""."""
    match = re.search(r"Credential=([^/,\s]+)/", authorization or "")
    return match.group(1) if match else ""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
    #: as servers do: headers and body leave as two writes, and the body must not wait (Nagle's
    #: algorithm) for the client to acknowledge the headers
    disable_nagle_algorithm = True
    server: _Server
    #: a `Proxy`'s connection to its upstream, kept while the client's connection lasts
    upstream: http.client.HTTPConnection | None = None

    def finish(self) -> None:
        super().finish()
        if self.upstream is not None:
            self.upstream.close()

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self._serve(body=True)

    def do_HEAD(self) -> None:
        self._serve(body=False)

    def do_PUT(self) -> None:
        self._serve(body=True)

    def do_POST(self) -> None:
        self._serve(body=True)

    def do_DELETE(self) -> None:
        self._serve(body=True)

    def _serve(self, body: bool) -> None:
        traffic = self.server.traffic
        fault = traffic.begin(
            self.command, self.path, self.headers.get("Range"), self.headers.get("Authorization")
        )
        try:
            if fault == "drop":
                self.close_connection = True
                return
            if fault == "stall":
                traffic.stall()
                self.close_connection = True
                return
            if isinstance(fault, int):
                self._answer(fault, b"injected fault", {}, body)
                return
            if isinstance(fault, str) and fault in S3_ERRORS:
                status, code, message = S3_ERRORS[fault]
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)  # (the connection stays usable, as S3's does)
                xml = {"Content-Type": "application/xml"}
                self._answer(status, s3_error_body(code, message), xml, body)
                return
            status, data, headers = self.server.respond(self)
            if fault in ("truncate", "stall-body"):
                self._answer(status, data, headers, body, truncate=True)
                if fault == "stall-body":
                    traffic.stall()
            else:
                self._answer(status, data, headers, body)
        finally:
            traffic.end()

    def _answer(
        self, status: int, data: bytes, headers: dict[str, str], body: bool, truncate: bool = False
    ) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if not any(name.lower() == "content-length" for name in headers):  # (HEAD: the upstream's)
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if body and self.command != "HEAD":
            self.server.traffic.transmit(len(data))
            self.wfile.write(data[: len(data) // 2] if truncate else data)
        if truncate:
            self.wfile.flush()
            self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    #: connections waiting to be accepted: a client opening 64 at once must not see its SYNs
    #: dropped (retried after seconds) as with socketserver's default of 5
    request_queue_size = 1024
    traffic: Traffic

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, client = super().get_request()
        self.__dict__.setdefault("connections", set()).add(sock)
        return sock, client

    def shutdown_request(self, request: Any) -> None:
        self.__dict__.setdefault("connections", set()).discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (gave up on a stalled or failing answer) is no error."""
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)

    def hang_up(self) -> None:
        """Close every kept-alive connection, as a server that goes away does."""
        for sock in list(self.__dict__.get("connections", ())):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def respond(self, handler: _Handler) -> tuple[int, bytes, dict[str, str]]:
        raise NotImplementedError


class FileServer(_Server):
    """Serves `root` read-only: GET with one Range (a-b, a-, -n), HEAD, 404, 416."""

    def __init__(self, root: Path, ignore_range: bool = False) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.root = root.resolve()
        self.ignore_range = ignore_range
        self.traffic = Traffic()

    def respond(self, handler: _Handler) -> tuple[int, bytes, dict[str, str]]:
        from urllib.parse import unquote, urlsplit

        if handler.command not in ("GET", "HEAD"):
            return 405, b"", {}
        path = (self.root / unquote(urlsplit(handler.path).path).lstrip("/")).resolve()
        if not path.is_relative_to(self.root) or not path.is_file():
            return 404, b"not found", {}
        data = path.read_bytes()
        rng = handler.headers.get("Range")
        if rng is None or self.ignore_range:
            return 200, data, {}
        match = _RANGE.match(rng)
        if match is None or match.groups() == ("", ""):
            return 400, b"bad range", {}
        first, last = match.groups()
        size = len(data)
        if first == "":  # suffix
            start, stop = max(0, size - int(last)), size
        else:
            start = int(first)
            stop = size if last == "" else min(size, int(last) + 1)
        if start >= size:
            return 416, b"", {"Content-Range": f"bytes */{size}"}
        return 206, data[start:stop], {"Content-Range": f"bytes {start}-{stop - 1}/{size}"}


class Proxy(_Server):
    """Forwards every request to `upstream` (host:port) unchanged, unless a fault says else."""

    def __init__(self, upstream: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.upstream = upstream
        self.traffic = Traffic()

    def respond(self, handler: _Handler) -> tuple[int, bytes, dict[str, str]]:
        length = int(handler.headers.get("Content-Length") or 0)
        payload = handler.rfile.read(length) if length else None
        headers = {
            k: v
            for k, v in handler.headers.items()
            if k.lower() not in ("connection", "keep-alive")
        }
        # one upstream connection per client connection, kept alive as the client's is: a
        # connection (and a server thread) per request made the bed, not the client, the cost
        reused = handler.upstream is not None
        for _ in range(2 if reused else 1):  # a kept connection the server closed: once anew
            if handler.upstream is None:
                handler.upstream = http.client.HTTPConnection(self.upstream, timeout=30)
            conn = handler.upstream
            try:
                conn.request(handler.command, handler.path, body=payload, headers=headers)
                answer = conn.getresponse()
                data = answer.read()
            except (OSError, http.client.HTTPException):
                conn.close()
                handler.upstream = None
                continue
            if answer.will_close:
                conn.close()
                handler.upstream = None
            kept = {
                k: v for k, v in answer.getheaders() if k.lower() not in _HOP_BY_HOP_AND_FRAMING
            }
            if handler.command == "HEAD" and answer.getheader("Content-Length") is not None:
                kept["Content-Length"] = answer.getheader("Content-Length")  # the object's size
            return answer.status, data, kept
        return 502, b"upstream unreachable", {}


#: the headers a proxy answers with its own values, not the upstream's
_HOP_BY_HOP_AND_FRAMING = frozenset(
    ("content-length", "transfer-encoding", "connection", "keep-alive", "server", "date")
)


@contextmanager
def serving(server: _Server) -> Iterator[_Server]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        server.hang_up()
        thread.join(10)


def address(server: _Server) -> str:
    host, port = server.server_address[:2]
    return f"{host}:{port}"


def s3_options(endpoint: str, *, attempts: int = 2, **extra: Any) -> dict[str, Any]:
    """s3fs storage options for a test server: fixed credentials, few quick retries."""
    return {
        "key": "testing",
        "secret": "testing",
        "client_kwargs": {"endpoint_url": endpoint, "region_name": "us-east-1"},
        "config_kwargs": {
            "retries": {"max_attempts": attempts, "mode": "standard"},
            "connect_timeout": 5,
            "read_timeout": 10,
        },
        **extra,
    }


def obstore_s3_options(endpoint: str, **extra: Any) -> dict[str, Any]:
    """The same for obstore (`obstore+s3://`): its spelling of endpoint and credentials."""
    return {
        "endpoint": endpoint,
        "access_key_id": "testing",
        "secret_access_key": "testing",
        "region": "us-east-1",
        "client_options": {"allow_http": True},
        **extra,
    }


# -- the latency test bed ---------------------------------------------------------------------------
class NetBed:
    """moto's S3 server and a file server, each behind a proxy adding `delay` seconds to every
    request (all requests wait at once, as on a real network) and optionally capping the
    bandwidth of answers; the proxies count requests and body bytes. For tests (the `netbed`
    fixtures) and `bench/network_bench.py`. `bucket` is created; `root` is what `http_url`
    serves. `apart`: moto in a process of its own (`MotoProcess`), as the bench runs it."""

    def __init__(
        self,
        root: Path,
        *,
        delay: float = 0.0,
        bandwidth: float | None = None,
        bucket: str = "bed",
        apart: bool = False,
    ) -> None:
        from contextlib import ExitStack

        self._stack = ExitStack()
        self.moto: Moto | MotoProcess = MotoProcess() if apart else Moto()
        self._stack.callback(self.moto.stop)
        self.bucket = bucket
        self.moto.create_bucket(bucket)
        self.s3_proxy = self._stack.enter_context(serving(Proxy(self.moto.address)))
        self.files = self._stack.enter_context(serving(FileServer(root)))
        self.http_proxy = self._stack.enter_context(serving(Proxy(address(self.files))))
        self.set_delay(delay, bandwidth)

    @property
    def s3_endpoint(self) -> str:
        return f"http://{address(self.s3_proxy)}"

    @property
    def http_url(self) -> str:
        return f"http://{address(self.http_proxy)}"

    def s3_options(self, **extra: Any) -> dict[str, Any]:
        """s3fs storage options for the proxied S3 server."""
        return s3_options(self.s3_endpoint, **extra)

    def set_delay(self, delay: float, bandwidth: float | None = None) -> None:
        for proxy in (self.s3_proxy, self.http_proxy):
            proxy.traffic.delay = delay
            proxy.traffic.bandwidth = bandwidth

    def reset(self) -> None:
        """Forget the requests seen so far (delay and bandwidth stay)."""
        for proxy in (self.s3_proxy, self.http_proxy):
            with proxy.traffic.lock:
                proxy.traffic.requests.clear()
                proxy.traffic.signers.clear()
                proxy.traffic.sent_bytes = 0
                proxy.traffic.max_in_flight = 0

    def requests(self) -> int:
        return sum(len(p.traffic.requests) for p in (self.s3_proxy, self.http_proxy))

    def sent_bytes(self) -> int:
        return sum(p.traffic.sent_bytes for p in (self.s3_proxy, self.http_proxy))

    def close(self) -> None:
        self._stack.close()

    def __enter__(self) -> NetBed:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
