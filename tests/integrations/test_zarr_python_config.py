"""zarr-python's configuration calls, run against `zarr.config` and `zarrkit.config`: the same
keys, defaults, dict and keyword forms, context-manager use, `reset` and `pprint`, and the same
effect on what arrays do (memory order, empty chunks, the default format, JSON indentation).
Where zarrkit differs on purpose, docs/zarr-python.md says why and the test
checks both sides."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrkit

zarr = pytest.importorskip("zarr")

pytestmark = [pytest.mark.interop, pytest.mark.filterwarnings("ignore:::zarr")]

LIBRARIES = pytest.mark.parametrize("zk", [zarr, zarrkit], ids=["zarr", "zarrkit"])

#: the keys whose value zarrkit takes from a setting of its own with another default
#: (docs/zarr-python.md, "Configuration")
OWN_DEFAULTS = {"async.concurrency", "threading.max_workers"}

#: every key of zarr-python 3.4.2's configuration, flattened; `codecs` whole (its names hold
#: dots, "numcodecs.zlib", which zarr-python's own `get` cannot reach one by one)
ALL_KEYS = sorted(
    f"{top}.{leaf}" if isinstance(sub, dict) and top != "codecs" else top
    for top, sub in zarr.config.to_dict().items()
    for leaf in (sub if isinstance(sub, dict) and top != "codecs" else [None])
)


@pytest.fixture(autouse=True)
def fresh_config() -> Iterator[None]:
    zarr.config.reset()
    zarrkit.config.reset()
    yield
    zarr.config.reset()
    zarrkit.config.reset()


@pytest.mark.parametrize("key", [k for k in ALL_KEYS if k not in OWN_DEFAULTS])
def test_every_key_has_zarr_pythons_default(key: str) -> None:
    assert zarrkit.config.get(key) == zarr.config.get(key)


def test_the_keys_with_zarrkits_own_defaults_report_what_zarrkit_uses() -> None:
    settings = zarrkit.config.get()
    assert zarrkit.config.get("async.concurrency") == settings.io_concurrency == 128
    assert zarr.config.get("async.concurrency") == 10
    assert zarrkit.config.get("threading.max_workers") == settings.threads
    assert zarr.config.get("threading.max_workers") is None


def test_pprint_prints_the_same_tree() -> None:
    """The same text, once the two keys with zarrkit's own defaults are given equal values."""
    printed = {}
    for zk in (zarr, zarrkit):
        with zk.config.set({"async.concurrency": 7, "threading.max_workers": 3}):
            out = io.StringIO()
            with redirect_stdout(out):
                zk.config.pprint()
            printed[zk.__name__] = out.getvalue()
    assert printed["zarrkit"] == printed["zarr"]
    assert "'order': 'C'" in printed["zarr"]


@LIBRARIES
def test_dict_form_as_a_context_manager(zk: Any) -> None:
    with zk.config.set({"array.order": "F", "async.timeout": 5.0, "json_indent": 4}):
        assert zk.config.get("array.order") == "F"
        assert zk.config.get("async.timeout") == 5.0
        assert zk.config.get("json_indent") == 4
        assert zk.config.get("array")["order"] == "F"
    assert zk.config.get("array.order") == "C"
    assert zk.config.get("async.timeout") is None


@LIBRARIES
def test_set_outside_a_with_block_lasts_until_reset(zk: Any) -> None:
    zk.config.set({"array.write_empty_chunks": True})
    zk.config.set(array__order="F")  # the keyword form, `__` for `.`
    assert zk.config.get("array.write_empty_chunks") is True
    assert zk.config.get("array.order") == "F"
    zk.config.reset()
    assert zk.config.get("array.write_empty_chunks") is False
    assert zk.config.get("array.order") == "C"


@LIBRARIES
def test_get_with_a_default(zk: Any) -> None:
    assert zk.config.get("array.no_such_key", "fallback") == "fallback"
    with pytest.raises(KeyError):
        zk.config.get("array.no_such_key")


@LIBRARIES
def test_a_removed_key_is_refused(zk: Any) -> None:
    with pytest.raises(ValueError, match="has been removed"):
        zk.config.set({"array.v3_default_compressors": {}})


# -- what the keys do to arrays -------------------------------------------------------------------
@LIBRARIES
def test_array_order_is_the_order_of_new_handles(zk: Any) -> None:
    with zk.config.set({"array.order": "F"}):
        a = zk.create_array({}, shape=(4, 3), chunks=(2, 3), dtype="i4")
        a[...] = np.arange(12).reshape(4, 3)
    assert a.order == "F"  # fixed in the handle when it was made
    values = a[...]
    assert values.flags.f_contiguous and not values.flags.c_contiguous
    assert a.config.order == "F"
    assert zk.create_array({}, shape=(2, 2), dtype="i4").order == "C"


@LIBRARIES
def test_write_empty_chunks(zk: Any) -> None:
    with zk.config.set({"array.write_empty_chunks": True}):
        a = zk.create_array({}, shape=(8,), chunks=(2,), dtype="i4")
        a[:] = 0
    assert a.nchunks_initialized == 4
    b = zk.create_array({}, shape=(8,), chunks=(2,), dtype="i4")
    b[:] = 0
    assert b.nchunks_initialized == 0


@LIBRARIES
def test_default_zarr_format(zk: Any, tmp_path: Path) -> None:
    with zk.config.set({"default_zarr_format": 2}):
        zk.create_group(str(tmp_path / "g"))
        zk.zeros((2,), store=str(tmp_path / "z"))
        zk.open_group(str(tmp_path / "o"), mode="w")
        zk.create((2,), store=str(tmp_path / "c"))
        zk.create_array(str(tmp_path / "n"), shape=(2,), dtype="<i4", zarr_format=None)
        # (`create_array`'s own default is 3, whatever the setting, in both)
        zk.create_array(str(tmp_path / "a"), shape=(2,), dtype="<i4")
    for name in ("g", "o"):
        assert (tmp_path / name / ".zgroup").exists()
    for name in ("z", "c", "n"):
        assert (tmp_path / name / ".zarray").exists()
    assert (tmp_path / "a" / "zarr.json").exists()
    zk.create_group(str(tmp_path / "v3"))
    assert (tmp_path / "v3" / "zarr.json").exists()


@LIBRARIES
def test_json_indent(zk: Any, tmp_path: Path) -> None:
    with zk.config.set({"json_indent": 4}):
        zk.create_group(str(tmp_path / "four"), attributes={"a": 1})
    zk.create_group(str(tmp_path / "two"), attributes={"a": 1})
    four = (tmp_path / "four" / "zarr.json").read_text()
    two = (tmp_path / "two" / "zarr.json").read_text()
    assert four.splitlines()[1].startswith('    "') and two.splitlines()[1].startswith('  "')
    assert json.loads(four) == json.loads(two)


# -- zarrkit's own side -------------------------------------------------------------------------
def test_zarrkits_keyword_form_and_zarr_pythons_keys_are_one_state() -> None:
    with zarrkit.config.set(io_concurrency=32):
        assert zarrkit.config.get("async.concurrency") == 32
        with zarrkit.config.set({"async.concurrency": 5}):
            assert zarrkit.config.get().io_concurrency == 5
            assert zarrkit.config.get("io_concurrency") == 5
        assert zarrkit.config.get().io_concurrency == 32
    with zarrkit.config.override(threads=3):
        assert zarrkit.config.get("threading.max_workers") == 3
    with zarrkit.config.set({"threading.max_workers": None}):  # zarr-python's "the default"
        assert zarrkit.config.get().threads >= 1


def test_keys_without_effect_are_kept_and_reported() -> None:
    zarrkit.config.set({"codec_pipeline.batch_size": 4, "codecs.example": "pkg.Codec"})
    assert zarrkit.config.get("codec_pipeline.batch_size") == 4
    assert zarrkit.config.get("codecs.example") == "pkg.Codec"
    assert zarrkit.config.get("codecs")["example"] == "pkg.Codec"
    assert zarrkit.config.to_dict()["codecs"]["example"] == "pkg.Codec"


def test_reading_missing_chunks_as_errors_is_not_done_and_says_so() -> None:
    with pytest.warns(UserWarning, match="read_missing_chunks=False has no effect"):
        zarrkit.config.set({"array.read_missing_chunks": False})
    assert zarrkit.config.get("array.read_missing_chunks") is False


def test_differences_unknown_keys_and_bad_values() -> None:
    """zarr-python keeps any key and any value; zarrkit refuses a key neither library has
    (naming the nearest) and a value its setting cannot take, before anything changes."""
    with zarr.config.set({"array.ordr": "F"}):
        assert zarr.config.get("array.ordr") == "F"
    with pytest.raises(KeyError, match="did you mean 'array.order'"):
        zarrkit.config.set({"array.ordr": "F"})
    with zarr.config.set({"array.order": "K"}):
        pass
    with pytest.raises(ValueError, match="'C' or 'F'"):
        zarrkit.config.set({"array.order": "K", "json_indent": 8})
    assert zarrkit.config.get("json_indent") == 2  # nothing of the refused change happened


def test_zarrkit_settings_are_reached_by_name_too() -> None:
    with zarrkit.config.set({"max_chunk_bytes": 1 << 20}):
        assert zarrkit.config.get("max_chunk_bytes") == 1 << 20
    assert zarrkit.config.get("max_chunk_bytes") == 512 << 20
