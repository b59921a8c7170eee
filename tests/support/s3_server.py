"""moto's S3 API, served on 127.0.0.1 for the tests and the bench.

moto's own server (werkzeug's development server) starts a thread and a connection for every
request: it answers each with `Connection: close`. With a hundred requests in flight, that and
the threads' fight for the interpreter lock cost more than moto's own work per request, on the
cores the client runs on, so the bed, not the client, set the pace. Here moto's S3
application answers on an event loop (aiohttp's server, uvloop when installed): connections
stay open, as S3's do, and requests are answered one at a time.

One at a time is also how S3 decides a conditional PUT: atomically. moto checks `If-Match` and
then stores the object as two steps, so two conditional PUTs racing on one key could both pass
(and a GET racing a PUT of its key could fail with a 500) on a server answering in threads.
"""

from __future__ import annotations

import asyncio
import io
import os
import socket
import sys
import threading
import urllib.request
from typing import Any
from urllib.parse import unquote

#: the headers aiohttp writes itself, from the answer it sends
_FRAMING = frozenset(("content-length", "transfer-encoding", "connection", "keep-alive"))


class _S3Server:
    """What a test or the bench needs of an S3 server: where it is, and a bucket made."""

    address: str  # host:port

    @property
    def endpoint(self) -> str:
        return f"http://{self.address}"

    def create_bucket(self, name: str) -> None:
        request = urllib.request.Request(f"{self.endpoint}/{name}", method="PUT")
        urllib.request.urlopen(request, timeout=10).read()


class Moto(_S3Server):
    """moto's S3 application in this process, on a free port of 127.0.0.1, answering on an
    event loop in a thread of its own (see the module's docstring). It serves S3 alone, without
    moto's own dispatch, which works out which of its ~200 services a request is for by listing
    its package's folders for every request. What S3 answers is moto's, unchanged."""

    def __init__(self) -> None:
        from moto.moto_server.werkzeug_app import create_backend_app

        os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
        self._application = create_backend_app("s3")
        self._loop = _new_loop()
        self._listening = socket.create_server(("127.0.0.1", 0), backlog=1024)
        host, port = self._listening.getsockname()[:2]
        self.address = f"{host}:{port}"
        self._runner: Any = None
        self._loop.run_until_complete(self._start())  # on this thread: a failure is raised here
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        self.running = True

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()
        self._loop.close()

    async def _start(self) -> None:
        from aiohttp import web

        app = web.Application(client_max_size=1 << 40)  # S3 has no body limit of aiohttp's
        app.router.add_route("*", "/{key:.*}", self._answer)
        self._runner = web.AppRunner(
            app, access_log=None, handle_signals=False, shutdown_timeout=0.5
        )
        await self._runner.setup()
        await web.SockSite(self._runner, self._listening).start()

    async def _answer(self, request: Any) -> Any:
        from aiohttp import web

        body = await request.read()
        status, headers, data = _call(self._application, _environ(request, body, self.address))
        answer = web.Response(status=status, body=data if request.method != "HEAD" else None)
        for name, value in headers:
            if name.lower() not in _FRAMING:
                answer.headers.add(name, value)
            elif name.lower() == "content-length" and request.method == "HEAD":
                answer.headers[name] = value  # the object's size, with no body
        return answer

    def stop(self) -> None:
        """Stop serving: the listening socket and every open connection close."""
        if self.running:
            self.running = False
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(30)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(30)


def _new_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def _environ(request: Any, body: bytes, address: str) -> dict[str, Any]:
    """A WSGI environ for `request`, as werkzeug's server makes one (PATH_INFO unquoted, each
    string as latin-1 of its UTF-8 bytes, headers with an underscore dropped)."""
    raw = request.raw_path
    path, _, query = raw.partition("?")
    host, port = address.rsplit(":", 1)
    environ: dict[str, Any] = {
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": False,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
        "REQUEST_METHOD": request.method,
        "SCRIPT_NAME": "",
        "PATH_INFO": _latin1(unquote(path)),
        "QUERY_STRING": _latin1(query),
        "REQUEST_URI": _latin1(raw),
        "RAW_URI": _latin1(raw),
        "REMOTE_ADDR": "127.0.0.1",
        "SERVER_NAME": host,
        "SERVER_PORT": port,
        "SERVER_PROTOCOL": f"HTTP/{request.version.major}.{request.version.minor}",
    }
    for name, value in request.headers.items():
        if "_" in name:
            continue
        key = name.upper().replace("-", "_")
        if key in ("CONTENT_LENGTH", "TRANSFER_ENCODING"):
            continue  # the body is read whole: its length is the one below
        if key != "CONTENT_TYPE":
            key = f"HTTP_{key}"
            if key in environ:
                value = f"{environ[key]},{value}"
        environ[key] = value
    environ["CONTENT_LENGTH"] = str(len(body))
    return environ


def _latin1(text: str) -> str:
    return text.encode().decode("latin-1")


def _call(application: Any, environ: dict[str, Any]) -> tuple[int, list[tuple[str, str]], bytes]:
    started: list[Any] = []
    written: list[bytes] = []

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        started[:] = [int(status.split(" ", 1)[0]), headers]
        return written.append

    chunks = application(environ, start_response)
    try:
        written.extend(chunks)
    finally:
        if hasattr(chunks, "close"):
            chunks.close()
    return started[0], started[1], b"".join(written)


class MotoProcess(_S3Server):
    """`Moto` in a process of its own: the bench's, so that the server's Python and the
    proxy's do not share one interpreter lock (tests keep `Moto`, which they can stop)."""

    def __init__(self) -> None:
        import multiprocessing as mp

        self._conn, child = mp.Pipe()
        self._process = mp.get_context("spawn").Process(
            target=_moto_apart, args=(child,), daemon=True
        )
        self._process.start()
        self.address = self._conn.recv()

    def stop(self) -> None:
        if self._process.is_alive():
            self._conn.send("stop")
            self._process.join(10)


def _moto_apart(conn: Any) -> None:
    moto = Moto()
    conn.send(moto.address)
    conn.recv()
    moto.stop()
