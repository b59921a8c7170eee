"""Servers on 127.0.0.1 that behave badly on purpose, for the store hardening tests: they record
every request's headers (to prove a credential never reached them), redirect (to another
origin, to themselves, from https to http) and send bodies without end. Built on the file
server of `store_servers`, so whatever they do not redirect or stream is served from a folder.
"""

from __future__ import annotations

import ssl
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from store_servers import FileServer, _Handler, address

#: the credentials a caller hands the HTTP stores, and the headers carrying them
CREDENTIALS = {
    "Authorization": "Bearer secret-token",
    "Proxy-Authorization": "Basic c2VjcmV0",
    "Cookie": "session=secret-cookie",
    "X-Api-Key": "secret-key",
}

#: the most an endless body sends before the server gives up on its own (the tests' bound)
_ENDLESS_BLOCKS = 1 << 16
_BLOCK = b"\0" * (1 << 16)


@dataclass(frozen=True)
class Endless:
    """A 200 answer whose body never ends: `framing` "chunked", "close" (no length, ended by
    closing) or "declared" (a Content-Length of `declared` bytes that are then sent). With
    `partial`, a 206 whose `Content-Range` claims the first 16 bytes, whatever its length says.
    """

    framing: str
    declared: int = 2 << 30
    partial: bool = False
    #: seconds to fall silent after the first block (0: never), as a stalled server does; the
    #: server's `release` ends the silence early
    stall: float = 0.0


class _HostileHandler(_Handler):
    server: HostileServer

    def _serve(self, body: bool) -> None:
        server = self.server
        with server.lock:
            server.seen.append(
                (self.command, self.path, {k.lower(): v for k, v in self.headers.items()})
            )
        for prefix, target in server.redirects.items():
            if self.path.startswith(prefix):
                location = target + self.path[len(prefix) :]
                self._answer(server.redirect_status, b"moved", {"Location": location}, body)
                return
        for prefix, endless in server.endless.items():
            if self.path.startswith(prefix) and self.command == "GET":
                self._stream(endless)
                return
        super()._serve(body)

    def end_headers(self) -> None:
        if self.server.object_headers:  # what an S3 client expects of every answer
            self.send_header("ETag", '"0"')
            self.send_header("Last-Modified", "Sat, 01 Jan 2000 00:00:00 GMT")
        super().end_headers()

    def _stream(self, endless: Endless) -> None:
        self.send_response(206 if endless.partial else 200)
        if endless.partial:
            self.send_header("Content-Range", "bytes 0-15/16")
        if endless.framing == "chunked":
            self.send_header("Transfer-Encoding", "chunked")
        elif endless.framing == "declared":
            self.send_header("Content-Length", str(endless.declared))
        else:
            self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        frame = (b"%x\r\n" % len(_BLOCK)) + _BLOCK + b"\r\n"
        try:
            if endless.stall:
                self.wfile.write(frame if endless.framing == "chunked" else _BLOCK)
                self.wfile.flush()
                self.server.release.wait(endless.stall)
                return
            for _ in range(_ENDLESS_BLOCKS):
                self.wfile.write(frame if endless.framing == "chunked" else _BLOCK)
                with self.server.lock:
                    self.server.streamed += len(_BLOCK)
        except OSError:  # the client hung up: what it should do
            pass


class HostileServer(FileServer):
    """A file server of `root` that also redirects paths starting with a key of `redirects` to
    that key's value + the rest of the path, and answers paths under a key of `endless` with
    a body without end. `seen` holds (method, path, lower-cased headers) of every request;
    `streamed` the bytes of endless bodies sent. With `tls`, it speaks https. With
    `object_headers`, every answer has an ETag and a Last-Modified, which S3 clients require:
    a folder `bucket/...` of `root` is then served as S3 serves GETs of path-style URLs."""

    def __init__(
        self,
        root: Path,
        *,
        redirects: dict[str, str] | None = None,
        endless: dict[str, Endless] | None = None,
        redirect_status: int = 302,
        tls: ssl.SSLContext | None = None,
        object_headers: bool = False,
    ) -> None:
        super().__init__(root)
        self.RequestHandlerClass = _HostileHandler
        self.redirects = dict(redirects or {})
        self.endless = dict(endless or {})
        self.redirect_status = redirect_status
        self.object_headers = object_headers
        self.lock = threading.Lock()
        #: set to end every stalled answer at once (the tests set it before shutting down)
        self.release = threading.Event()
        self.seen: list[tuple[str, str, dict[str, str]]] = []
        self.streamed = 0
        self.scheme = "http"
        if tls is not None:
            self.socket = tls.wrap_socket(self.socket, server_side=True)
            self.scheme = "https"

    @property
    def origin(self) -> str:
        return f"{self.scheme}://{address(self)}"

    def credentials_seen(self) -> list[tuple[str, str]]:
        """(path, header) of every credential header that reached this server."""
        wanted = {name.lower() for name in CREDENTIALS}
        with self.lock:
            return [
                (path, name) for _, path, headers in self.seen for name in headers if name in wanted
            ]

    def paths(self) -> list[str]:
        with self.lock:
            return [path for _, path, _ in self.seen]


def self_signed(folder: Path) -> tuple[Path, ssl.SSLContext]:
    """A certificate for 127.0.0.1 made by `openssl`, and a server context using it."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return cert, context
