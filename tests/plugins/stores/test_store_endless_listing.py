"""An S3 server whose ListObjectsV2 pages never end (`IsTruncated` always true, a new
continuation token each time): counting an array's chunks stops, with a `StoreError`, once
the listing holds more keys than the array can have, on both S3 backends; memory and time
stay bounded (issue 44, item 5)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

import zarrkit as zk
from zarrkit.errors import StoreError

pytestmark = pytest.mark.network

PAGE = 1000
ARRAY = {
    "zarr_format": 3,
    "node_type": "array",
    "shape": [8],
    "data_type": "uint8",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
    "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
    "fill_value": 0,
    "codecs": [{"name": "bytes"}],
    "attributes": {},
}


class _EndlessPages(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, kind: str, head: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("ETag", '"0"')
        self.send_header("Last-Modified", "Sat, 01 Jan 2000 00:00:00 GMT")
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def do_HEAD(self) -> None:
        self.do_GET(head=True)

    def do_GET(self, head: bool = False) -> None:
        url = urlparse(self.path)
        query = parse_qs(url.query)
        if "list-type" in query:
            with self.server.lock:
                self.server.pages += 1
                if self.server.pages > 50:  # the test's own bound: a client that never stops
                    self._send(500, b"enough", "text/plain", head)
                    return
            start = int(query.get("continuation-token", ["0"])[0])
            prefix = query.get("prefix", [""])[0]
            keys = "".join(
                f"<Contents><Key>{prefix}junk{n}</Key>"
                "<LastModified>2000-01-01T00:00:00.000Z</LastModified>"
                "<ETag>&quot;0&quot;</ETag><Size>1</Size>"
                "<StorageClass>STANDARD</StorageClass></Contents>"
                for n in range(start, start + PAGE)
            )
            body = (
                '<?xml version="1.0" encoding="UTF-8"?>'
                '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                f"<Name>bucket</Name><Prefix>{prefix}</Prefix><KeyCount>{PAGE}</KeyCount>"
                f"<MaxKeys>{PAGE}</MaxKeys><IsTruncated>true</IsTruncated>{keys}"
                f"<NextContinuationToken>{start + PAGE}</NextContinuationToken>"
                "</ListBucketResult>"
            ).encode()
            self._send(200, body, "application/xml", head)
        elif url.path == "/bucket/a.zarr/zarr.json":
            self._send(200, json.dumps(ARRAY).encode(), "application/json", head)
        else:
            body = b"<Error><Code>NoSuchKey</Code><Message>none</Message></Error>"
            self._send(404, body, "application/xml", head)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _EndlessPages)
        self.lock = threading.Lock()
        self.pages = 0

    @property
    def endpoint(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"


@pytest.fixture
def endless() -> Iterator[_Server]:
    server = _Server()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def _options(backend: str, endpoint: str) -> dict[str, Any]:
    if backend == "obstore+s3":
        return {
            "endpoint": endpoint,
            "region": "us-east-1",
            "access_key_id": "testing",
            "secret_access_key": "testing",
            "client_options": {"allow_http": True},
            "virtual_hosted_style_request": False,
        }
    return {
        "key": "testing",
        "secret": "testing",
        "client_kwargs": {"endpoint_url": endpoint, "region_name": "us-east-1"},
    }


@pytest.mark.parametrize("backend", ["obstore+s3", "fsspec+s3"])
def test_counting_chunks_stops_on_a_listing_that_never_ends(endless: _Server, backend: str) -> None:
    if backend == "obstore+s3":
        pytest.importorskip("obstore")
    else:
        pytest.importorskip("s3fs")
    a = zk.open_array(
        f"{backend}://bucket/a.zarr", mode="r", storage_options=_options(backend, endless.endpoint)
    )
    with pytest.raises(StoreError, match="more than the") as info:
        _ = a.nchunks_initialized
    assert info.value.operation == "list"
    # the array has 4 chunks: its listing may hold 4 + 1,024 keys, two pages of this server
    assert endless.pages <= 3
