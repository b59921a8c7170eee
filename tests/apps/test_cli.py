"""The `zarrkit` command, run as a user runs it: a separate process, on real data written by
zarrkit and by zarr-python, real files corrupted on disk, a real S3 API (moto), real pipes and a
real terminal. `plugins` with plugins installed on disk."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from zarrkit_testing.fake_dist import make_distribution

import zarrkit as zk

CONSOLE_SCRIPT = Path(sys.executable).with_name("zarrkit")
KEY_GROUP = "zarrkit.chunk_key_encodings"


def zarrkit(
    *args: str,
    cwd: Path,
    site: Path | None = None,
    env: dict[str, str] | None = None,
    module: bool = False,
) -> subprocess.CompletedProcess:
    """Run the `zarrkit` console script (or `python -m zarrkit`), `site` on PYTHONPATH."""
    full_env = {
        k: v for k, v in os.environ.items() if not k.startswith("ZARRKIT_") and k != "PYTHONPATH"
    }
    if site is not None:
        full_env["PYTHONPATH"] = str(site)
    full_env.update(env or {})
    if module or not CONSOLE_SCRIPT.exists():
        command = [sys.executable, "-m", "zarrkit", *args]
    else:
        command = [str(CONSOLE_SCRIPT), *args]
    return subprocess.run(
        command, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=120
    )


def key_encoding_dist(site: Path, dist: str, module: str, source: str, **entry_points: str) -> None:
    make_distribution(site, dist, entry_points={KEY_GROUP: entry_points}, modules={module: source})


def encoding_source(class_name: str, name: str) -> str:
    return (
        "from zarrkit.abc import ChunkKeyEncoding\n"
        "from zarrkit.abc import names\n\n"
        f"class {class_name}(ChunkKeyEncoding):\n    names = names({name!r})\n"
    )


def table_row(output: str, heading: str, name: str) -> list[str]:
    """The cells of the row for `name` under the `heading:` line of the table."""
    lines = output.splitlines()
    start = lines.index(f"{heading}:")
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        cells = line.split()
        if cells[0] == name:
            return cells
    raise AssertionError(f"no row {name!r} under {heading!r} in:\n{output}")


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return tmp_path / "site"


@pytest.fixture
def broken_site(site: Path) -> Path:
    key_encoding_dist(
        site,
        "zarrkit-shaky",
        "zk_shaky",
        "raise ImportError('libshaky is not installed')",
        shaky="zk_shaky:Shaky",
    )
    return site


@pytest.fixture
def twin_site(site: Path) -> Path:
    for letter in "ab":
        key_encoding_dist(
            site,
            f"twin-{letter}",
            f"twin_{letter}",
            encoding_source("Twin", "twin"),
            twin=f"twin_{letter}:Twin",
        )
    return site


# -- listing --------------------------------------------------------------------------------------
def test_plugins_lists_first_party_extensions_unloaded(tmp_path: Path) -> None:
    result = zarrkit("plugins", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert table_row(result.stdout, "chunk grids", "regular") == [
        "regular",
        "zarrkit",
        "0.1.0",
        "zarrkit.plugins.grids.regular:RegularChunkGrid",
        "no",
    ]
    assert table_row(result.stdout, "chunk key encodings", "default")[1] == "zarrkit"
    for heading in (
        "data types",
        "codecs",
        "memory layouts",
        "storage transformers",
        "stores",
        "hook plugins",
    ):
        assert f"{heading}:" in result.stdout.splitlines()


def test_plugins_json_is_a_list_of_unloaded_providers(tmp_path: Path) -> None:
    result = zarrkit("plugins", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    regular = next(r for r in rows if (r["kind"], r["name"]) == ("chunk_grid", "regular"))
    assert regular["distribution"] == "zarrkit"
    assert regular["value"] == "zarrkit.plugins.grids.regular:RegularChunkGrid"
    assert all(row["loaded"] is False for row in rows)


def test_python_dash_m_zarrkit_works(tmp_path: Path) -> None:
    result = zarrkit("plugins", "--json", "--kind", "chunk-grids", cwd=tmp_path, module=True)
    assert result.returncode == 0, result.stderr
    # only chunk grids: zarrkit's own and the installed example package's (examples/)
    rows = json.loads(result.stdout)
    assert {r["kind"] for r in rows} == {"chunk_grid"}
    names = {(r["kind"], r["name"]) for r in rows}
    assert {("chunk_grid", "regular"), ("chunk_grid", "rectilinear")} <= names


def test_unknown_kind_is_a_usage_error(tmp_path: Path) -> None:
    result = zarrkit("plugins", "--kind", "gadgets", cwd=tmp_path)
    assert result.returncode == 2
    assert "unknown kind 'gadgets'" in result.stderr and "chunk_grid" in result.stderr


def test_no_command_prints_usage(tmp_path: Path) -> None:
    result = zarrkit(cwd=tmp_path)
    assert result.returncode == 2
    assert "plugins" in result.stderr


def test_listing_imports_no_plugin_even_a_broken_one(tmp_path: Path, broken_site: Path) -> None:
    result = zarrkit("plugins", "--kind", "chunk_key_encoding", cwd=tmp_path, site=broken_site)
    assert result.returncode == 0, result.stderr
    assert table_row(result.stdout, "chunk key encodings", "shaky") == [
        "shaky",
        "zarrkit-shaky",
        "1.0",
        "zk_shaky:Shaky",
        "no",
    ]


def test_hook_plugins_are_listed_with_their_distribution(tmp_path: Path, site: Path) -> None:
    make_distribution(
        site,
        "zarrkit-bridge",
        version="3.1",
        entry_points={"zarrkit.hooks": {"bridge": "zk_bridge"}},
        modules={"zk_bridge": "raise ImportError('hook modules are not imported by a listing')"},
    )
    result = zarrkit("plugins", "--kind", "hooks", cwd=tmp_path, site=site)
    assert result.returncode == 0, result.stderr
    assert table_row(result.stdout, "hook plugins", "bridge") == [
        "bridge",
        "zarrkit-bridge",
        "3.1",
        "zk_bridge",
        "no",
    ]


# -- checking -------------------------------------------------------------------------------------
def test_check_shows_names_per_format_and_passes_when_clean(tmp_path: Path) -> None:
    result = zarrkit("plugins", "--check", "--kind", "memory_layout", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert table_row(result.stdout, "memory layouts", "C")[-1] == "ok"
    assert "v2: writes 'C'" in result.stdout
    assert "no problems found" in result.stdout


def test_check_json_has_names_per_format(tmp_path: Path) -> None:
    result = zarrkit("plugins", "--check", "--json", "--kind", "chunk_grid", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert {"rectilinear", "regular"} <= set(rows)
    regular, rectilinear = rows["regular"], rows["rectilinear"]
    assert regular["names"]["v3"] == {"name": "regular", "aliases": [], "pattern": None}
    assert regular["problems"] == []
    assert rectilinear["names"]["v3"] == {"name": "rectilinear", "aliases": [], "pattern": None}
    assert rectilinear["problems"] == []


def test_check_reports_a_broken_distribution(tmp_path: Path, broken_site: Path) -> None:
    result = zarrkit(
        "plugins", "--check", "--kind", "chunk_key_encoding", cwd=tmp_path, site=broken_site
    )
    assert result.returncode == 1
    assert table_row(result.stdout, "chunk key encodings", "shaky")[-2:] == ["load", "error"]
    assert "zarrkit-shaky" in result.stdout and "libshaky is not installed" in result.stdout
    assert table_row(result.stdout, "chunk key encodings", "default")[-1] == "ok"


def test_check_reports_a_collision_naming_both_distributions(
    tmp_path: Path, twin_site: Path
) -> None:
    result = zarrkit(
        "plugins", "--check", "--kind", "chunk_key_encoding", cwd=tmp_path, site=twin_site
    )
    assert result.returncode == 1
    assert table_row(result.stdout, "chunk key encodings", "twin")[-1] == "collision"
    (collision,) = [line for line in result.stdout.splitlines() if "[collision]" in line]
    assert "'twin'" in collision and "twin-a 1.0" in collision and "twin-b 1.0" in collision


def test_check_json_reports_the_collision_on_both_rows(tmp_path: Path, twin_site: Path) -> None:
    result = zarrkit(
        "plugins", "--check", "--json", "--kind", "chunk_key_encoding", cwd=tmp_path, site=twin_site
    )
    assert result.returncode == 1
    twins = [r for r in json.loads(result.stdout) if r["name"] == "twin"]
    assert sorted(r["distribution"] for r in twins) == ["twin-a", "twin-b"]
    assert all([p["category"] for p in r["problems"]] == ["collision"] for r in twins)


def test_check_accepts_a_collision_settled_by_zarrkit_prefer(
    tmp_path: Path, twin_site: Path
) -> None:
    result = zarrkit(
        "plugins",
        "--check",
        "--kind",
        "chunk_key_encoding",
        cwd=tmp_path,
        site=twin_site,
        env={"ZARRKIT_PREFER": "chunk_key_encoding:twin=twin-b"},
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_check_reports_who_answers_a_shared_name_and_why(tmp_path: Path, site: Path) -> None:
    """The example LZ4 package (installed with zarrkit's tests) names `lz4`, which the generic
    numcodecs bridge answers too: not a problem, and `--check` says which wins and why; v2's
    `|O` (two data types of zarrkit) is left to the metadata, not called a collision."""
    result = zarrkit("plugins", "--check", "--kind", "codec", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    (line,) = [ln for ln in result.stdout.splitlines() if ln.strip().startswith("codec 'lz4'")]
    assert "zarrkit-example-lz4" in line.split(" names it")[0]
    assert "numcodecs_bridge" in line.split(" over ")[1]
    dtypes = zarrkit("plugins", "--check", "--json", "--kind", "data_type", cwd=tmp_path)
    assert dtypes.returncode == 0, dtypes.stdout + dtypes.stderr
    string = next(r for r in json.loads(dtypes.stdout) if r["name"] == "string")
    assert string["problems"] == []
    assert any("'|O'" in note and "metadata" in note for note in string["precedence"])


def test_check_reports_a_class_without_names(tmp_path: Path, site: Path) -> None:
    key_encoding_dist(
        site,
        "zarrkit-nameless",
        "zk_nameless",
        "from zarrkit.abc import ChunkKeyEncoding\n\nclass Nameless(ChunkKeyEncoding):\n    pass\n",
        nameless="zk_nameless:Nameless",
    )
    result = zarrkit("plugins", "--check", "--kind", "chunk_key_encoding", cwd=tmp_path, site=site)
    assert result.returncode == 1
    assert "zarrkit-nameless" in result.stdout and "declares no `names`" in result.stdout


def test_check_reports_a_broken_hook_plugin(tmp_path: Path, site: Path) -> None:
    make_distribution(
        site,
        "zarrkit-badhook",
        entry_points={"zarrkit.hooks": {"badhook": "zk_badhook"}},
        modules={"zk_badhook": "raise ImportError('badhook needs libfoo')"},
    )
    result = zarrkit("plugins", "--check", "--kind", "hook", cwd=tmp_path, site=site)
    assert result.returncode == 1
    assert table_row(result.stdout, "hook plugins", "badhook")[-2:] == ["load", "error"]
    assert "zarrkit-badhook" in result.stdout and "badhook needs libfoo" in result.stdout
    assert "RuntimeWarning" not in result.stderr


def test_check_lists_a_family_declared_by_a_pattern_entry_point(tmp_path: Path, site: Path) -> None:
    """Until 0.2 a family of names could come from a hook plugin; it is a pattern entry point."""
    key_encoding_dist(
        site,
        "zarrkit-bridge",
        "zk_bridge",
        "from zarrkit.abc import ChunkKeyEncoding\n"
        "from zarrkit.abc import names\n\n"
        "class Bridged(ChunkKeyEncoding):\n    names = names(pattern=r'bridge\\..+')\n",
        **{"bridge.*": "zk_bridge:Bridged"},
    )
    result = zarrkit(
        "plugins", "--check", "--json", "--kind", "chunk_key_encoding", cwd=tmp_path, site=site
    )
    assert result.returncode == 0, result.stdout + result.stderr
    bridged = next(r for r in json.loads(result.stdout) if r["name"] == "bridge.*")
    assert (bridged["origin"], bridged["distribution"]) == ("entry point", "zarrkit-bridge")
    assert bridged["names"]["v3"]["pattern"] == r"bridge\..+"


# == info, tree, ls, check ========================================================================
BUCKET = "zarrkit-cli"


def run_json(*args: str, cwd: Path, code: int = 0) -> Any:
    result = zarrkit(*args, "--json", cwd=cwd)
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr
    return json.loads(result.stdout)


def info_lines(text: str) -> dict[str, str]:
    """`Label : value` lines as a dict (labels and values stripped)."""
    out = {}
    for line in text.splitlines():
        label, sep, value = line.partition(" : ")
        if sep:
            out[label.strip()] = value.strip()
    return out


@pytest.fixture
def zarr_python_data(tmp_path: Path) -> Path:
    """A hierarchy written by zarr-python 3: a sharded array written in part, a chunked array
    whose chunks end in a crc32c checksum, and a subgroup."""
    zarr = pytest.importorskip("zarr")
    from zarr import codecs

    path = tmp_path / "zp.zarr"
    root = zarr.open_group(str(path), mode="w")
    sharded = root.create_array(
        "sharded", shape=(64, 64), chunks=(8, 8), shards=(32, 32), dtype="float32"
    )
    sharded[:40] = np.arange(40 * 64, dtype="float32").reshape(40, 64)
    summed = root.create_group("sub").create_array(
        "summed",
        shape=(30,),
        chunks=(10,),
        dtype="int16",
        compressors=[codecs.ZstdCodec(), codecs.Crc32cCodec()],
    )
    summed[:20] = np.arange(20, dtype="int16")
    return path


@pytest.fixture
def zarrkit_data(tmp_path: Path) -> Path:
    """A hierarchy written by zarrkit: v3 arrays (one sharded), and a v2 array."""
    path = tmp_path / "zk.zarr"
    plain = zk.create_array(
        str(path), path="g/plain", shape=(20, 20), dtype="int32", chunks=(10, 10)
    )
    plain[:] = np.arange(400, dtype="int32").reshape(20, 20)
    sharded = zk.create_array(
        str(path), path="g/sharded", shape=(16, 16), dtype="uint8", chunks=(4, 4), shards=(8, 8)
    )
    sharded[:] = np.arange(256, dtype="uint8").reshape(16, 16)
    return path


def test_info_shows_what_zarr_pythons_info_complete_shows(zarr_python_data: Path) -> None:
    zarr = pytest.importorskip("zarr")
    theirs = info_lines(
        repr(zarr.open_array(str(zarr_python_data), path="sharded").info_complete())
    )
    result = zarrkit("info", str(zarr_python_data / "sharded"), cwd=zarr_python_data.parent)
    assert result.returncode == 0, result.stderr
    ours = info_lines(result.stdout)
    for label in (
        "Type",
        "Zarr format",
        "Fill value",
        "Shape",
        "Shard shape",
        "Chunk shape",
        "No. bytes",
        "No. bytes stored",
        "Storage ratio",
    ):
        assert ours[label] == theirs[label], label
    # the same codecs, as JSON: the inner chunks' for a sharded array, as zarr-python shows
    assert json.loads(ours["Serializer"]) == {
        "name": "bytes",
        "configuration": {"endian": "little"},
    }
    assert [c["name"] for c in json.loads(ours["Compressors"])] == ["zstd"]
    assert json.loads(ours["Codecs"])[0]["name"] == "sharding_indexed"
    # initialized out of all: zarr-python counts 2 x 2 shards as 4 too
    assert ours["Shards Initialized"] == f"{theirs['Shards Initialized']}/4"


def test_info_json_counts_bytes_and_chunks_as_zarr_python(zarr_python_data: Path) -> None:
    zarr = pytest.importorskip("zarr")
    theirs = zarr.open_array(str(zarr_python_data), path="sub/summed")
    info = run_json("info", str(zarr_python_data), "--path", "sub/summed", cwd=zarr_python_data)
    assert info["nbytes_stored"] == theirs.nbytes_stored()
    assert info["chunks_initialized"] == theirs.nchunks_initialized == 2
    assert info["nchunks"] == 3
    assert info["nbytes"] == 60
    assert info["storage_ratio"] == pytest.approx(60 / theirs.nbytes_stored())
    assert [c["name"] for c in info["compressors"]] == ["zstd", "crc32c"]
    assert info["shard_shape"] is None and info["chunk_shape"] == [10]


def test_info_of_a_group_counts_members_as_zarr_python(zarr_python_data: Path) -> None:
    zarr = pytest.importorskip("zarr")
    theirs = info_lines(repr(zarr.open_group(str(zarr_python_data)).info_complete()))
    result = zarrkit("info", str(zarr_python_data), cwd=zarr_python_data.parent)
    assert result.returncode == 0, result.stderr
    ours = info_lines(result.stdout)
    for label in ("Type", "Zarr format", "No. members", "No. arrays", "No. groups"):
        assert ours[label] == theirs[label], label
    assert ours["No. members"] == "3"


def test_info_of_a_v2_array_written_by_zarrkit(tmp_path: Path) -> None:
    arr = zk.create_array(
        str(tmp_path / "v2.zarr"), shape=(100,), dtype="<f8", chunks=(10,), zarr_format=2
    )
    arr[:50] = 1.5
    info = run_json("info", str(tmp_path / "v2.zarr"), cwd=tmp_path)
    assert info["zarr_format"] == "2"
    assert info["chunks_initialized"] == 5 and info["nchunks"] == 10
    stored = sum(f.stat().st_size for f in (tmp_path / "v2.zarr").iterdir())
    assert info["nbytes_stored"] == stored  # documents included, as zarr-python counts


def test_a_url_may_run_on_into_the_hierarchy(zarrkit_data: Path) -> None:
    by_url = run_json("info", str(zarrkit_data / "g" / "plain"), cwd=zarrkit_data)
    by_path = run_json("info", str(zarrkit_data), "--path", "g/plain", cwd=zarrkit_data)
    assert by_path["name"] == "/g/plain"
    for key in ("shape", "chunk_shape", "nbytes", "nbytes_stored", "chunks_initialized"):
        assert by_url[key] == by_path[key]


def test_a_missing_node_is_an_error_naming_it(tmp_path: Path) -> None:
    result = zarrkit("info", str(tmp_path / "nothing.zarr"), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("zarrkit info: error:")
    assert "Traceback" not in result.stderr
    bad = zarrkit("ls", str(tmp_path), "--storage-options", "[1]", cwd=tmp_path)
    assert bad.returncode == 2 and "expected a JSON object" in bad.stderr


def test_tree_draws_the_hierarchy(zarrkit_data: Path) -> None:
    zk.open_group(str(zarrkit_data), mode="r+").create_group("empty")
    result = zarrkit("tree", str(zarrkit_data), cwd=zarrkit_data)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "/",
        "├── empty",
        "└── g",
        "    ├── plain (20, 20) int32",
        "    └── sharded (16, 16) uint8",
    ]
    shallow = zarrkit("tree", str(zarrkit_data), "--depth", "1", cwd=zarrkit_data)
    assert shallow.stdout.splitlines() == ["/", "├── empty", "└── g"]
    tree = run_json("tree", str(zarrkit_data), cwd=zarrkit_data)
    g = tree["members"][1]
    assert g["name"] == "g" and [m["name"] for m in g["members"]] == ["plain", "sharded"]
    assert g["members"][1]["chunks"] == [4, 4]


def test_ls_lists_members_and_recursive_lists_paths(zarr_python_data: Path) -> None:
    result = zarrkit("ls", str(zarr_python_data), cwd=zarr_python_data)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["array  sharded  64x64  float32", "group  sub/"]
    deep = run_json("ls", str(zarr_python_data), "-r", cwd=zarr_python_data)
    assert [(m["name"], m["type"]) for m in deep] == [
        ("sharded", "array"),
        ("sub", "group"),
        ("sub/summed", "array"),
    ]


# -- check ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("data", ["zarr_python_data", "zarrkit_data"])
def test_check_passes_intact_data(data: str, request: pytest.FixtureRequest) -> None:
    path: Path = request.getfixturevalue(data)
    result = zarrkit("check", str(path), cwd=path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith("no problems found")
    report = run_json("check", str(path), cwd=path)
    assert report["ok"] is True and report["faults"] == []
    assert sum(a["stored"] for a in report["arrays"]) > 0


def test_check_names_a_corrupt_chunk_by_key(zarrkit_data: Path) -> None:
    (zarrkit_data / "g" / "plain" / "c" / "1" / "0").write_bytes(b"not zstd at all")
    result = zarrkit("check", str(zarrkit_data), cwd=zarrkit_data)
    assert result.returncode == 1
    assert result.stdout.splitlines()[0].startswith("corrupt: g/plain/c/1/0 (/g/plain)")
    assert "1 problem(s) found" in result.stdout
    report = run_json("check", str(zarrkit_data), cwd=zarrkit_data, code=1)
    assert [(f["key"], f["kind"], f["inner"]) for f in report["faults"]] == [
        ("g/plain/c/1/0", "corrupt", None)
    ]


def test_check_reports_a_bad_crc32c_as_a_checksum_fault(zarr_python_data: Path) -> None:
    chunk = zarr_python_data / "sub" / "summed" / "c" / "1"
    data = bytearray(chunk.read_bytes())
    data[-1] ^= 0xFF  # the stored checksum no longer matches the bytes
    chunk.write_bytes(bytes(data))
    report = run_json("check", str(zarr_python_data), cwd=zarr_python_data, code=1)
    assert [(f["array"], f["key"], f["kind"]) for f in report["faults"]] == [
        ("/sub/summed", "sub/summed/c/1", "checksum")
    ]
    assert "crc32c checksum mismatch" in report["faults"][0]["message"]


def test_check_reports_a_truncated_shard(zarr_python_data: Path) -> None:
    shard = zarr_python_data / "sharded" / "c" / "1" / "0"
    shard.write_bytes(shard.read_bytes()[:-200])
    report = run_json("check", str(zarr_python_data), cwd=zarr_python_data, code=1)
    (fault,) = report["faults"]
    assert (fault["key"], fault["inner"], fault["kind"]) == ("sharded/c/1/0", None, "checksum")
    assert "truncated" in fault["message"]


def _shard_index(shard: bytes, inner: int) -> tuple[np.ndarray, int]:
    """The (offset, nbytes) table at a shard's end (bytes + crc32c) and where it starts."""
    start = len(shard) - (16 * inner + 4)
    return np.frombuffer(shard[start : start + 16 * inner], "<u8").reshape(inner, 2), start


def test_check_reports_an_inner_chunk_the_index_points_past(zarr_python_data: Path) -> None:
    """A shard whose (intact, checksummed) index places one inner chunk outside the shard:
    that inner chunk is missing, reported with its coordinates inside the shard."""
    from crc32c import crc32c

    path = zarr_python_data / "sharded" / "c" / "0" / "1"
    shard = path.read_bytes()
    table, start = _shard_index(shard, 16)
    table = table.copy()
    table[5] = (len(shard) * 2, table[5][1])  # inner chunk (1, 1) of the 4 x 4
    body = table.astype("<u8").tobytes()
    path.write_bytes(shard[:start] + body + crc32c(body).to_bytes(4, "little"))
    report = run_json("check", str(zarr_python_data), cwd=zarr_python_data, code=1)
    assert [(f["key"], f["inner"], f["kind"]) for f in report["faults"]] == [
        ("sharded/c/0/1", [1, 1], "missing")
    ]


def test_check_names_a_corrupt_inner_chunk_of_a_shard(zarrkit_data: Path) -> None:
    path = zarrkit_data / "g" / "sharded" / "c" / "1" / "1"
    shard = bytearray(path.read_bytes())
    table, _start = _shard_index(bytes(shard), 4)
    offset, nbytes = (int(n) for n in table[2])  # inner chunk (1, 0)
    shard[offset : offset + nbytes] = b"\x00" * nbytes
    path.write_bytes(bytes(shard))
    report = run_json("check", str(zarrkit_data), cwd=zarrkit_data, code=1)
    assert [(f["key"], f["inner"], f["kind"]) for f in report["faults"]] == [
        ("g/sharded/c/1/1", [1, 0], "corrupt")
    ]


def test_an_absent_chunk_is_fill_unless_all_are_required(zarr_python_data: Path) -> None:
    report = run_json("check", str(zarr_python_data), "--path", "sub/summed", cwd=zarr_python_data)
    assert report["ok"] and report["arrays"][0]["absent"] == 1
    dense = run_json(
        "check",
        str(zarr_python_data / "sub" / "summed"),
        "--require-all",
        cwd=zarr_python_data,
        code=1,
    )
    assert [(f["key"], f["kind"]) for f in dense["faults"]] == [("c/2", "missing")]


def test_check_reads_a_node_whose_metadata_is_broken(zarrkit_data: Path) -> None:
    (zarrkit_data / "g" / "plain" / "zarr.json").write_text("{not json")
    result = zarrkit("check", str(zarrkit_data), cwd=zarrkit_data)
    assert result.returncode == 1
    assert "metadata: g/plain" in result.stdout
    assert "Traceback" not in result.stderr


# -- S3 -------------------------------------------------------------------------------------------
def test_commands_take_storage_options_for_s3(moto: Any, tmp_path: Path) -> None:
    pytest.importorskip("s3fs")
    from store_servers import s3_options

    options = s3_options(moto.endpoint)
    url = f"s3://{BUCKET}/data.zarr"
    arr = zk.create_array(
        url, path="a", shape=(12, 12), dtype="int64", chunks=(4, 4), storage_options=options
    )
    arr[:] = np.arange(144).reshape(12, 12)
    flag = ("--storage-options", json.dumps(options))
    info = run_json("info", url + "/a", *flag, cwd=tmp_path)
    assert (
        info["chunks_initialized"] == info["nchunks"] == 9 and info["store_type"] == "FsspecStore"
    )
    assert run_json("ls", url, *flag, cwd=tmp_path) == [
        {"name": "a", "type": "array", "shape": [12, 12], "dtype": "int64", "chunks": [4, 4]}
    ]
    assert run_json("check", url, *flag, cwd=tmp_path)["ok"] is True
    import s3fs

    s3fs.S3FileSystem(**options).pipe(f"{BUCKET}/data.zarr/a/c/2/2", b"broken")
    broken = run_json("check", url, *flag, cwd=tmp_path, code=1)
    assert [f["key"] for f in broken["faults"]] == ["a/c/2/2"]
    copied = zarrkit("copy", url, str(tmp_path / "copy.zarr"), *flag, "--no-progress", cwd=tmp_path)
    assert copied.returncode == 0, copied.stderr
    assert zk.open_array(str(tmp_path / "copy.zarr"), path="a")[0, 5] == 5


# -- HTTP ------------------------------------------------------------------------------------------
def test_a_group_over_http_is_browsed_through_consolidated_metadata(zarrkit_data: Path) -> None:
    """HTTP cannot list: `ls`, `tree`, `info` and `check` find members in consolidated
    metadata, and read chunks key by key."""
    from store_servers import FileServer, address, serving

    zk.consolidate_metadata(str(zarrkit_data))
    with serving(FileServer(zarrkit_data.parent)) as server:
        url = f"http://{address(server)}/{zarrkit_data.name}"
        assert run_json("ls", url, "-r", cwd=zarrkit_data)[1:] == [
            {
                "name": "g/plain",
                "type": "array",
                "shape": [20, 20],
                "dtype": "int32",
                "chunks": [10, 10],
            },
            {
                "name": "g/sharded",
                "type": "array",
                "shape": [16, 16],
                "dtype": "uint8",
                "chunks": [4, 4],
            },
        ]
        assert run_json("info", url, cwd=zarrkit_data)["members"] == 3
        report = run_json("check", url, cwd=zarrkit_data)
        assert report["ok"] and [a["stored"] for a in report["arrays"]] == [4, 4]


# -- pipes and progress ---------------------------------------------------------------------------
def test_a_closed_pipe_ends_the_command_quietly(tmp_path: Path) -> None:
    """`zarrkit ... | head`: far more output than a pipe buffers, the reader gone after one line."""
    group = zk.create_group(str(tmp_path / "big.zarr"))
    group.attrs["notes"] = ["x" * 100] * 10_000  # 1 MB of JSON
    command = [str(CONSOLE_SCRIPT), "info", "--json", str(tmp_path / "big.zarr")]
    for args in (command, [str(CONSOLE_SCRIPT), "plugins", "--json"]):
        with subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path
        ) as writer:
            assert writer.stdout is not None and writer.stderr is not None
            with subprocess.Popen(
                ["head", "-n", "1"], stdin=writer.stdout, stdout=subprocess.PIPE
            ) as head:
                writer.stdout.close()  # head alone holds the pipe's reading end
                out, _ = head.communicate(timeout=60)
            err = writer.stderr.read()
            writer.wait(timeout=60)
        assert out.strip() in (b"{", b"[")
        assert err == b"", err.decode()
        assert writer.returncode in (0, 141)  # 141: ended by the closed pipe, as `ls | head`


def test_progress_shows_bytes_rate_and_time_left_on_a_terminal(zarrkit_data: Path) -> None:
    import fcntl
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    try:
        proc = subprocess.run(
            [str(CONSOLE_SCRIPT), "check", str(zarrkit_data)],
            stdout=subprocess.PIPE,
            stderr=follower,
            cwd=zarrkit_data,
            timeout=120,
        )
        os.close(follower)
        drawn = b""
        while True:
            try:
                part = os.read(leader, 65536)
            except OSError:  # the terminal's other end is closed: all read
                break
            if not part:
                break
            drawn += part
    finally:
        os.close(leader)
    assert proc.returncode == 0
    text = drawn.decode()
    # tqdm's bar: the array, bytes done of all (2 x 1.6 kB + 256 B), the rate and time left
    assert "/g/sharded [" in text
    assert "1.81kB/1.81kB" in text and "B/s" in text and " left" in text


def test_progress_stays_off_when_stderr_is_not_a_terminal(zarrkit_data: Path) -> None:
    quiet = zarrkit("check", str(zarrkit_data), cwd=zarrkit_data)
    assert quiet.returncode == 0 and quiet.stderr == ""
    forced = zarrkit("check", str(zarrkit_data), "--progress", cwd=zarrkit_data)
    assert "B/s" in forced.stderr and "left" in forced.stderr


def test_progress_without_tqdm_draws_a_plain_line(zarrkit_data: Path, site: Path) -> None:
    """tqdm is the `cli` extra: without it the same content is drawn by zarrkit itself."""
    (site / "tqdm").mkdir(parents=True)
    (site / "tqdm" / "__init__.py").write_text("raise ImportError('tqdm is not installed')\n")
    result = zarrkit("check", str(zarrkit_data), "--progress", cwd=zarrkit_data, site=site)
    assert result.returncode == 0, result.stderr
    last = result.stderr.splitlines()[-1]  # (redrawn lines: \r, read as line ends)
    assert last.startswith("/g/sharded [####################] 1.8kB/1.8kB ")
    assert last.endswith(" 00:00 left")
    assert "B/s" in last


def test_convert_progress_counts_the_arrays_bytes(tmp_path: Path) -> None:
    src, dst = tmp_path / "src.zarr", tmp_path / "dst.zarr"
    first = zk.create_array(str(src), path="a", shape=(30, 30), dtype="uint16", chunks=(10, 10))
    first[:] = 7
    zk.create_array(str(src), path="b", shape=(10,), dtype="uint8", chunks=(5,))[:] = 1
    result = zarrkit("convert", str(src), str(dst), "--to", "v2", "--progress", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    # one bar over both arrays: 1800 + 10 bytes decoded, the chunks of the array being copied
    assert "/a [" in result.stderr and "9/9 chunks" in result.stderr
    last = result.stderr.splitlines()[-1]
    assert last.startswith("/b [##########")
    assert "1.77kB/1.77kB" in last and "2/2 chunks" in last and "B/s" in last
