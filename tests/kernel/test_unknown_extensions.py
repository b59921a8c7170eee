"""Issue 47: a document naming several extensions nobody provides says so once, listing them
all with where they appear (one install round, not one per extension), and names the
distribution to install when the install-hint index knows it."""

from __future__ import annotations

import json
from typing import Any

import pytest

import zarrkit as zk
from zarrkit import hooks
from zarrkit.abc import V3_DRAFT_2020
from zarrkit.errors import UnknownExtensionError, UnknownExtensionsError
from zarrkit.plugins.stores.memory import MemoryStore


def _document_with(**changes: Any) -> MemoryStore:
    store = MemoryStore()
    zk.create_array(store, shape=(4,), chunks=(2,), dtype="i4", shards=(4,))
    doc = json.loads(store.get("zarr.json") or b"")
    for field, value in changes.items():
        doc[field] = value(doc) if callable(value) else value
    store.set("zarr.json", json.dumps(doc).encode())
    return store


def _with_unknown_codecs(doc: dict) -> list:
    codecs = doc["codecs"]
    codecs[0]["configuration"]["codecs"].append({"name": "no.such.inner"})
    codecs.append({"name": "no.such.outer"})
    codecs.append({"name": "no.such.optional", "must_understand": False})
    return codecs


def test_every_unknown_extension_is_listed_at_once() -> None:
    store = _document_with(
        data_type="no.such.type",
        codecs=_with_unknown_codecs,
        storage_transformers=[{"name": "no.such.transformer"}],
    )
    with pytest.raises(UnknownExtensionsError) as info:
        zk.open_array(store)
    error = info.value
    assert isinstance(error, UnknownExtensionError)  # (what callers already catch)
    found = [(m.kind, m.name, m.field) for m in error.missing]
    assert found == [
        ("data_type", "no.such.type", "data_type"),
        ("codec", "no.such.inner", "codecs[0].configuration.codecs[2]"),
        ("codec", "no.such.outer", "codecs[1]"),
        ("storage_transformer", "no.such.transformer", "storage_transformers[0]"),
    ]
    message = str(error)
    assert message.startswith("zarr.json in ")
    assert "4 extensions of this document" in message
    assert "no.such.optional" not in message  # must_understand: false is skipped, not missing
    assert "`zarrkit plugins`" in message


def test_one_unknown_extension_keeps_its_own_error() -> None:
    store = _document_with(data_type="no.such.type")
    with pytest.raises(UnknownExtensionError) as info:
        zk.open_array(store)
    assert not isinstance(info.value, UnknownExtensionsError)
    assert "'no.such.type'" in str(info.value)
    assert "`zarrkit plugins` lists the plugins installed" in str(info.value)


def test_the_hint_names_the_distribution_it_knows() -> None:
    hint = hooks.install_hint("codec", "example.lz4", "v3")
    assert hint is not None and "'zarrkit-example-lz4'" in hint
    assert "examples/lz4-codec" in hint
    assert hooks.install_hint("codec", "no.such.codec", "v3") is None


def test_a_v2_document_lists_its_unknown_codecs_at_once() -> None:
    store = MemoryStore()
    zk.create_array(store, shape=(4,), chunks=(2,), dtype="i4", zarr_format=2)
    doc = json.loads(store.get(".zarray") or b"")
    doc["filters"] = [{"id": "no_such_filter"}]
    doc["compressor"] = {"id": "no_such_compressor"}
    store.set(".zarray", json.dumps(doc).encode())
    with pytest.raises(UnknownExtensionsError) as info:
        zk.open_array(store)
    found = [(m.name, m.field) for m in info.value.missing]
    assert found == [("no_such_filter", "filters[0]"), ("no_such_compressor", "compressor")]
    assert str(info.value).startswith(".zarray in ")


def test_a_2020_draft_document_lists_its_unknown_extensions_at_once() -> None:
    store = MemoryStore()
    zk.create_array(
        store, path="a", shape=(4,), chunks=(2,), dtype="<i4", zarr_format=V3_DRAFT_2020
    )
    key = "meta/root/a.array.json"
    doc = json.loads(store.get(key) or b"")
    doc["compressor"] = {"codec": "https://example.org/no-such-compressor", "configuration": {}}
    doc["attributes"]["filters"] = [{"id": "no_such_filter"}]
    doc["chunk_memory_layout"] = {"extension": "https://example.org/no-such-layout"}
    store.set(key, json.dumps(doc).encode())
    with pytest.raises(UnknownExtensionsError) as info:
        zk.open_array(store, path="a")
    found = [(m.kind, m.name, m.field) for m in info.value.missing]
    assert found == [
        ("memory_layout", "https://example.org/no-such-layout", "chunk_memory_layout"),
        ("codec", "https://example.org/no-such-compressor", "compressor"),
        ("codec", "no_such_filter", "attributes.filters[0]"),
    ]
