"""`zarrkit plugins`, run as a user runs it: a separate process, plugins installed on disk."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from zarrkit.testing.fake_dist import make_distribution

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
        "from zarrkit.chunk_key_encoding import ChunkKeyEncoding\n"
        "from zarrkit.names import names\n\n"
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
    assert {(r["kind"], r["name"]) for r in json.loads(result.stdout)} == {
        ("chunk_grid", "regular")
    }


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
    (regular,) = json.loads(result.stdout)
    assert regular["names"]["v3"] == {"name": "regular", "aliases": [], "pattern": None}
    assert regular["problems"] == []


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


def test_check_reports_a_class_without_names(tmp_path: Path, site: Path) -> None:
    key_encoding_dist(
        site,
        "zarrkit-nameless",
        "zk_nameless",
        "class Nameless:\n    pass\n",
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
        "from zarrkit.chunk_key_encoding import ChunkKeyEncoding\n"
        "from zarrkit.names import names\n\n"
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
