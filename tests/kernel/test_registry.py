"""The extension registries, exercised through real installed (fake) distributions.

Every plugin here is a real distribution written to disk and put on `sys.path` by the
`fake_distribution` fixture of zarrkit's pytest plugin, so discovery, distribution names and
versions go through `importlib.metadata` exactly as for a pip-installed plugin.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import pkgutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from zarrkit_testing.fake_dist import installed, make_distribution

from zarrkit import config, registry
from zarrkit.abc.chunk_key_encoding import ChunkKeyEncoding
from zarrkit.abc.extension import V2, V3, V3_DRAFT_2020
from zarrkit.abc.extension import names as spelled
from zarrkit.errors import (
    InvalidPluginError,
    PluginConflictError,
    PluginLoadError,
    UnknownExtensionError,
)

KIND = "chunk_key_encoding"
GROUP = "zarrkit.chunk_key_encodings"


def key_encoding_module(**classes: str) -> str:
    """Source of a module defining chunk key encodings: class name -> `names(...)` arguments."""
    lines = [
        "from zarrkit.abc import ChunkKeyEncoding",
        "from zarrkit.abc import names",
        "",
    ]
    for class_name, names_args in classes.items():
        lines += [f"class {class_name}(ChunkKeyEncoding):", f"    names = names({names_args})", ""]
    return "\n".join(lines)


def key_encodings(**entry_points: str) -> dict[str, dict[str, str]]:
    return {GROUP: entry_points}


def run_python(
    code: str, *, cwd: Path, pythonpath: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter (so sys.modules shows what zarrkit itself imported)."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("ZARRKIT_")}
    full_env.pop("PYTHONPATH", None)
    if pythonpath is not None:
        full_env["PYTHONPATH"] = str(pythonpath)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


# -- laziness -------------------------------------------------------------------------------------
def test_import_zarrkit_imports_no_plugin_and_scans_no_entry_point(tmp_path: Path) -> None:
    result = run_python(
        """
        import importlib.metadata as md, json, sys
        calls = []
        def spy(name):
            real = getattr(md, name)
            def wrapper(*args, **kwargs):
                calls.append(name)
                return real(*args, **kwargs)
            setattr(md, name, wrapper)
        for name in ("entry_points", "distributions", "distribution"):
            spy(name)
        import zarrkit, zarrkit.registry
        print(json.dumps({
            "calls": calls,
            "plugin_modules": sorted(m for m in sys.modules if m.startswith("zarrkit.plugins")),
            "registries": sorted(zarrkit.registry._registries),
            "integrations": sorted(m for m in ("dask", "distributed", "xarray", "zarrkit.dask")
                                   if m in sys.modules),
        }))
    """,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report == {"calls": [], "plugin_modules": [], "registries": [], "integrations": []}


def test_using_arrays_and_pickling_imports_no_dask(tmp_path: Path) -> None:
    """dask and distributed are optional extras: only `zarrkit.dask` (or `Array.to_dask`)
    imports them, never writing, reading, pickling or forking an array."""
    result = run_python(
        """
        import json, pickle, sys
        import numpy as np, zarrkit
        a = zarrkit.create_array("arr", shape=(8, 8), chunks=(4, 4), shards=(8, 8), dtype="i4")
        a[...] = np.arange(64).reshape(8, 8)
        again = pickle.loads(pickle.dumps(zarrkit.open_array("arr")))
        assert (again[...] == a[...]).all()
        print(json.dumps(sorted(m for m in ("dask", "distributed", "xarray", "zarrkit.dask")
                                if m in sys.modules)))
    """,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_a_process_reads_each_distributions_metadata_once(tmp_path: Path) -> None:
    """Parsing a distribution's METADATA is not free; read again per entry point, it made the
    first array a process opened slow to open."""
    result = run_python(
        """
        import collections, importlib.metadata as md, json
        reads = collections.Counter()
        real = md.PathDistribution.read_text
        def counting(self, filename):
            if filename in ("METADATA", "PKG-INFO"):
                reads[str(getattr(self, "_path", id(self)))] += 1
            return real(self, filename)
        md.PathDistribution.read_text = counting
        import numpy as np, zarrkit
        a = zarrkit.create_array("arr", shape=(40, 30), chunks=(16, 16), dtype="float32",
                                 codecs=[{"name": "bytes"}, {"name": "zstd"}, {"name": "crc32c"}])
        a[...] = np.arange(1200, dtype="float32").reshape(40, 30)
        b = zarrkit.open_array("arr", mode="r")
        assert (b[...] == a[...]).all()
        zarrkit.registry.lookup("codec", "blosc")
        print(json.dumps(reads))
    """,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    reads = json.loads(result.stdout)
    assert reads, "no distribution metadata was read at all"
    assert max(reads.values()) == 1, {k: n for k, n in reads.items() if n > 1}


def test_resolving_regular_imports_only_its_module(tmp_path: Path) -> None:
    result = run_python(
        """
        import json, sys
        from zarrkit import registry
        cls = registry.lookup("chunk_grid", "regular")
        print(json.dumps([cls.__module__, sorted(m for m in sys.modules if m.startswith("zarrkit.plugins"))]))
    """,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    module, plugin_modules = json.loads(result.stdout)
    assert module == "zarrkit.plugins.grids.regular"
    assert plugin_modules == [
        "zarrkit.plugins",
        "zarrkit.plugins.grids",
        "zarrkit.plugins.grids.regular",
    ]


def test_pytest_plugin_adds_no_import_beyond_zarrkit_and_pytest(tmp_path: Path) -> None:
    """pytest imports the plugin in every run of every project that has zarrkit installed."""
    result = run_python(
        """
        import json, sys
        import pytest, zarrkit
        before = set(sys.modules)
        import zarrkit_testing.pytest_plugin
        added = sorted(set(sys.modules) - before)
        print(json.dumps({"added": added, "numpy": "numpy" in sys.modules}))
    """,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    # no registry (so no entry-point scan), no plugin, not even numpy
    assert set(report["added"]) <= {"zarrkit_testing", "zarrkit_testing.pytest_plugin"}, report[
        "added"
    ]
    assert report["numpy"] is False


# -- names: entry point, alias, pattern, format ---------------------------------------------------
@pytest.fixture
def dotted(fake_distribution) -> None:
    """A distribution with a named encoding (with an alias), a family and a v2-only one."""
    fake_distribution(
        "zarrkit-dotted",
        version="2.5",
        entry_points=key_encodings(
            dotted="zk_dotted:Dotted", numbered="zk_dotted:Numbered", legacy="zk_dotted:Legacy"
        ),
        modules={
            "zk_dotted": key_encoding_module(
                Dotted='"dotted", aliases=["dots"]',
                Numbered=r'pattern=r"x\d+"',
                Legacy='v2="legacy"',
            )
        },
    )


@pytest.mark.parametrize(
    "name, class_name",
    [
        ("dotted", "Dotted"),  # entry-point name
        ("dots", "Dotted"),  # alias
        ("x1", "Numbered"),  # pattern family
        ("x2048", "Numbered"),
    ],
)
def test_installed_extension_resolves_by_name_alias_and_pattern(
    dotted, name: str, class_name: str
) -> None:
    cls = registry.lookup(KIND, name)
    assert (cls.__module__, cls.__name__) == ("zk_dotted", class_name)


def test_installed_extension_is_listed_with_its_distribution(dotted) -> None:
    providers = {p.name: p for p in registry.get_registry(KIND).providers()}
    assert (providers["dotted"].distribution, providers["dotted"].version) == (
        "zarrkit-dotted",
        "2.5",
    )
    assert providers["default"].distribution == "zarrkit"


def test_name_outside_the_pattern_is_unknown(dotted) -> None:
    with pytest.raises(UnknownExtensionError):
        registry.lookup(KIND, "x")


def test_name_declared_only_for_v2_is_unknown_in_v3(dotted) -> None:
    assert registry.lookup(KIND, "legacy", V2).__name__ == "Legacy"
    with pytest.raises(UnknownExtensionError) as caught:
        registry.lookup(KIND, "legacy", V3)
    err = caught.value
    assert (err.kind, err.name, err.format) == (KIND, "legacy", V3)
    assert KIND in str(err) and "'legacy'" in str(err) and V3 in str(err)


def test_alias_is_per_format(dotted) -> None:
    with pytest.raises(UnknownExtensionError, match=V3_DRAFT_2020):
        registry.lookup(KIND, "dots", V3_DRAFT_2020)


def test_uninstalling_removes_the_extension(tmp_path: Path) -> None:
    make_distribution(
        tmp_path,
        "zarrkit-gone",
        entry_points=key_encodings(gone="zk_gone:Gone"),
        modules={"zk_gone": key_encoding_module(Gone='"gone"')},
    )
    with installed(tmp_path):
        assert registry.lookup(KIND, "gone").__name__ == "Gone"
    assert "zk_gone" not in sys.modules
    with pytest.raises(UnknownExtensionError):
        registry.lookup(KIND, "gone")


# -- runtime registration -------------------------------------------------------------------------
def test_runtime_registration_wins_over_entry_points_and_unregister_restores(
    zarrkit_register,
) -> None:
    class MyDefault(ChunkKeyEncoding):
        names = spelled("default")

    installed_cls = registry.lookup(KIND, "default")
    handle = zarrkit_register(KIND, MyDefault)
    assert registry.lookup(KIND, "default") is MyDefault
    registry.unregister(handle)
    assert registry.lookup(KIND, "default") is installed_cls
    assert installed_cls.__module__ == "zarrkit.plugins.keys.default"


def test_an_argument_of_a_foreign_type_is_adapted_by_a_class_of_its_kind(
    zarrkit_register,
) -> None:
    """`Extension.adapt`: an object that is no name, JSON object or extension is offered to
    the classes of the kind (a bridge recognises its library's objects); none taking it is
    the error it was."""
    from zarrkit.errors import MetadataError
    from zarrkit.negotiation import extension_from_arg

    class Foreign:
        pass

    class Adapting(ChunkKeyEncoding):
        names = spelled("adapting")

        @classmethod
        def adapt(cls, obj: object, format: str = V3) -> Adapting | None:
            return cls() if isinstance(obj, Foreign) else None

    zarrkit_register(KIND, Adapting)
    assert isinstance(extension_from_arg(KIND, Foreign(), V3, key="k"), Adapting)
    with pytest.raises(MetadataError, match="expected an extension name"):
        extension_from_arg(KIND, object(), V3, key="k")


def test_registering_a_class_without_names_is_refused() -> None:
    class Nameless(ChunkKeyEncoding):
        pass

    with pytest.raises(TypeError, match="declares no `names`"):
        registry.register(KIND, Nameless, name="nameless")
    assert registry.lookup(KIND, "default").__name__ == "DefaultChunkKeyEncoding"


def test_registering_a_class_of_another_kind_is_refused_naming_the_base() -> None:
    class NotAKeyEncoding:
        names = spelled("not-a-key-encoding")

    with pytest.raises(
        InvalidPluginError, match=r"does not derive from zarrkit\.abc\.ChunkKeyEncoding"
    ):
        registry.register(KIND, NotAKeyEncoding)
    with pytest.raises(UnknownExtensionError):
        registry.lookup(KIND, "not-a-key-encoding")


def test_an_entry_point_of_another_kind_fails_to_load_as_that_provider(fake_distribution) -> None:
    """A codec class declared in the chunk key encodings' group is that provider failing to
    load, named, while the kind's other plugins keep working."""
    fake_distribution(
        "misfiled-plugin",
        entry_points=key_encodings(misfiled="zk_misfiled:Misfiled"),
        modules={
            "zk_misfiled": "from zarrkit.abc import BytesBytesCodec, names\n\n"
            "class Misfiled(BytesBytesCodec):\n    names = names('misfiled')\n"
        },
    )
    with pytest.raises(InvalidPluginError) as info:
        registry.lookup(KIND, "misfiled")
    assert "misfiled-plugin" in str(info.value)
    assert "zarrkit.abc.ChunkKeyEncoding" in str(info.value)
    assert registry.lookup(KIND, "default").__name__ == "DefaultChunkKeyEncoding"


# -- two distributions, one name ------------------------------------------------------------------
@pytest.fixture
def twins(fake_distribution) -> None:
    for letter in "ab":
        fake_distribution(
            f"twin-{letter}",
            entry_points=key_encodings(
                twin=f"twin_{letter}:Twin", **{f"solo-{letter}": f"twin_{letter}:Solo"}
            ),
            modules={f"twin_{letter}": key_encoding_module(Twin='"twin"', Solo=f'"solo-{letter}"')},
        )


def test_one_name_from_two_distributions_is_a_conflict_naming_both(twins) -> None:
    assert registry.lookup(KIND, "solo-a").__module__ == "twin_a"
    assert registry.lookup(KIND, "solo-b").__module__ == "twin_b"
    with pytest.raises(PluginConflictError) as caught:
        registry.lookup(KIND, "twin")
    message = str(caught.value)
    assert "twin-a" in message and "twin-b" in message and "ZARRKIT_PREFER" in message
    assert registry.lookup(KIND, "default").__name__ == "DefaultChunkKeyEncoding"


def test_conflict_is_settled_by_config_prefer(twins) -> None:
    with config.override(prefer={(KIND, "twin"): "twin-b"}):
        assert registry.lookup(KIND, "twin").__module__ == "twin_b"
    with config.override(prefer={(KIND, "twin"): "Twin_A"}):  # normalised like pip does
        assert registry.lookup(KIND, "twin").__module__ == "twin_a"


def test_conflict_is_settled_by_zarrkit_prefer(tmp_path: Path) -> None:
    site = tmp_path / "site"
    for letter in "ab":
        make_distribution(
            site,
            f"twin-{letter}",
            entry_points=key_encodings(twin=f"twin_{letter}:Twin"),
            modules={f"twin_{letter}": key_encoding_module(Twin='"twin"')},
        )
    code = "from zarrkit import registry; print(registry.lookup('chunk_key_encoding', 'twin').__module__)"
    chosen = run_python(
        code,
        cwd=tmp_path,
        pythonpath=site,
        env={"ZARRKIT_PREFER": "chunk_key_encoding:twin=twin-b"},
    )
    assert (chosen.returncode, chosen.stdout.strip()) == (0, "twin_b"), chosen.stderr
    undecided = run_python(code, cwd=tmp_path, pythonpath=site)
    assert undecided.returncode == 1 and "PluginConflictError" in undecided.stderr


def test_preference_skips_importing_the_other_distribution(fake_distribution) -> None:
    fake_distribution(
        "good-twin",
        entry_points=key_encodings(twin="good_twin:Twin"),
        modules={"good_twin": key_encoding_module(Twin='"twin"')},
    )
    fake_distribution(
        "bad-twin",
        entry_points=key_encodings(twin="bad_twin:Twin"),
        modules={"bad_twin": "raise ImportError('bad twin is broken')"},
    )
    with config.override(prefer={(KIND, "twin"): "good-twin"}):
        assert registry.lookup(KIND, "twin").__module__ == "good_twin"
    assert "bad_twin" not in sys.modules


def test_one_name_from_two_distributions_for_different_formats_is_no_conflict(
    fake_distribution,
) -> None:
    fake_distribution(
        "only-v3",
        entry_points=key_encodings(split="only_v3:Split"),
        modules={"only_v3": key_encoding_module(Split='"split"')},
    )
    fake_distribution(
        "only-v2",
        entry_points=key_encodings(split="only_v2:Split"),
        modules={"only_v2": key_encoding_module(Split='v2="split"')},
    )
    assert registry.lookup(KIND, "split", V3).__module__ == "only_v3"
    assert registry.lookup(KIND, "split", V2).__module__ == "only_v2"


# -- broken plugins -------------------------------------------------------------------------------
@pytest.fixture
def broken(fake_distribution) -> None:
    fake_distribution(
        "zarrkit-shaky",
        version="0.3",
        entry_points=key_encodings(shaky="zk_shaky:Shaky"),
        modules={"zk_shaky": "raise ImportError('libshaky is not installed')"},
    )


def test_broken_entry_point_fails_when_its_name_is_used(broken) -> None:
    with pytest.raises(PluginLoadError) as caught:
        registry.lookup(KIND, "shaky")
    message = str(caught.value)
    assert (
        "'shaky'" in message
        and "zarrkit-shaky" in message
        and "libshaky is not installed" in message
    )
    assert registry.lookup(KIND, "default").__name__ == "DefaultChunkKeyEncoding"


def test_broken_entry_point_is_reported_on_a_miss(broken) -> None:
    with pytest.raises(UnknownExtensionError) as caught:
        registry.lookup(KIND, "no-such-encoding")
    message = str(caught.value)
    assert "'no-such-encoding'" in message
    assert "zarrkit-shaky" in message and "libshaky is not installed" in message


def test_entry_point_to_a_class_without_names_is_a_load_error(fake_distribution) -> None:
    fake_distribution(
        "nameless",
        entry_points=key_encodings(nameless="zk_nameless:Nameless"),
        modules={
            "zk_nameless": "from zarrkit.abc import ChunkKeyEncoding\n\n"
            "class Nameless(ChunkKeyEncoding):\n    pass\n"
        },
    )
    with pytest.raises(PluginLoadError, match="declares no `names`"):
        registry.lookup(KIND, "nameless")
    with pytest.raises(UnknownExtensionError, match="declares no `names`"):
        registry.lookup(KIND, "no-such-encoding")


# -- families known only at run time: a pattern entry point ---------------------------------------
# (what the hooks `zarrkit_register_extensions` and `zarrkit_unknown_extension` did until 0.2)
FAMILY_SOURCE = """
import re

from zarrkit.abc import ChunkKeyEncoding
from zarrkit.abc import names

#: the members, as another library would report them at run time
MEMBERS = {"alpha", "beta"}


class Bridged(ChunkKeyEncoding):
    names = names(pattern=r"bridge\\..+")

    @classmethod
    def matches_name(cls, name, format):
        return format == "v3" and name.startswith("bridge.") and name[7:] in MEMBERS


class LastChance(ChunkKeyEncoding):
    names = names(pattern=r"late\\..+")
"""


@pytest.fixture
def family(fake_distribution) -> None:
    fake_distribution(
        "zarrkit-bridge",
        entry_points=key_encodings(
            **{"bridge.*": "zk_bridge:Bridged", "late.*": "zk_bridge:LastChance"}
        ),
        modules={"zk_bridge": FAMILY_SOURCE},
    )


def test_a_pattern_entry_point_serves_a_family_known_at_run_time(family) -> None:
    assert registry.lookup(KIND, "bridge.alpha").__name__ == "Bridged"
    assert registry.lookup(KIND, "bridge.beta").__name__ == "Bridged"
    with pytest.raises(UnknownExtensionError):
        registry.lookup(KIND, "bridge.gamma")  # not a member, though it fits the pattern
    providers = {p.name: p for p in registry.get_registry(KIND).providers()}
    assert providers["bridge.*"].distribution == "zarrkit-bridge"


def test_a_pattern_entry_point_answers_a_last_chance_name(family) -> None:
    assert registry.lookup(KIND, "late.anything").__name__ == "LastChance"
    assert registry.lookup(KIND, "default").__name__ == "DefaultChunkKeyEncoding"


# -- hook plugins ---------------------------------------------------------------------------------
HINT_HOOKS = """
from zarrkit.hooks import hookimpl


@hookimpl
def zarrkit_install_hint(kind, name, format):
    if name.startswith("needs."):
        return "pip install zarrkit-" + name.removeprefix("needs.")
    return None
"""


@pytest.fixture
def bridge(fake_distribution) -> None:
    fake_distribution(
        "zarrkit-hints",
        entry_points={"zarrkit.hooks": {"bridge": "zk_bridge"}},
        modules={"zk_bridge": HINT_HOOKS},
    )


def test_hook_plugin_install_hint_is_in_the_error(bridge) -> None:
    with pytest.raises(UnknownExtensionError, match="pip install zarrkit-frobnicate"):
        registry.lookup(KIND, "needs.frobnicate")


def test_hook_plugin_is_not_imported_for_entry_point_names(bridge) -> None:
    registry.lookup(KIND, "default")
    assert "zk_bridge" not in sys.modules


def test_broken_hook_plugin_is_skipped_with_a_warning_and_reported_on_a_miss(
    fake_distribution, dotted
) -> None:
    fake_distribution(
        "zarrkit-badhook",
        entry_points={"zarrkit.hooks": {"badhook": "zk_badhook"}},
        modules={"zk_badhook": "raise ImportError('badhook needs libfoo')"},
    )
    # no hook supplies extensions any more: aliases work without importing hook plugins at all
    assert registry.lookup(KIND, "dots").__name__ == "Dotted"
    assert "zk_badhook" not in sys.modules
    with pytest.warns(RuntimeWarning, match="badhook needs libfoo"):
        with pytest.raises(UnknownExtensionError) as caught:
            registry.lookup(KIND, "no-such-encoding")
    assert "zarrkit-badhook" in str(caught.value) and "badhook needs libfoo" in str(caught.value)


def test_hook_plugin_implementing_a_removed_hook_is_skipped_and_reported_on_a_miss(
    fake_distribution, dotted
) -> None:
    """Until 0.2 a hook plugin could register extensions; one still written so is reported, not
    silently ignored, and the message says what replaced the hook."""
    source = (
        "from zarrkit.hooks import hookimpl\n\n"
        "class Nameless:\n    pass\n\n"
        "@hookimpl\ndef zarrkit_register_extensions(register):\n"
        "    register('chunk_key_encoding', Nameless)\n"
    )
    fake_distribution(
        "zarrkit-sloppy",
        entry_points={"zarrkit.hooks": {"sloppy": "zk_sloppy"}},
        modules={"zk_sloppy": source},
    )
    with pytest.warns(RuntimeWarning, match="zarrkit_register_extensions"):
        with pytest.raises(UnknownExtensionError) as caught:
            registry.lookup(KIND, "no-such-encoding")
    assert "zarrkit-sloppy" in str(caught.value) and "zarrkit_register_extensions" in str(
        caught.value
    )
    assert "entry points" in str(caught.value)
    assert registry.lookup(KIND, "dots").__name__ == "Dotted"


def test_second_hook_plugin_of_one_name_is_reported_not_silently_dropped(fake_distribution) -> None:
    for dist in ("hooks-one", "hooks-two"):
        fake_distribution(
            dist,
            entry_points={"zarrkit.hooks": {"samename": dist.replace("-", "_")}},
            modules={dist.replace("-", "_"): "from zarrkit.hooks import hookimpl\n"},
        )
    with pytest.warns(RuntimeWarning, match="name is taken by") as caught:
        with pytest.raises(UnknownExtensionError):
            registry.lookup(KIND, "no-such-encoding")
    (message,) = [str(w.message) for w in caught if "taken by" in str(w.message)]
    assert "hooks-one" in message and "hooks-two" in message


# -- the pytest fixtures isolate tests ------------------------------------------------------------
ISOLATION_TESTS = '''
import sys

import pytest

from zarrkit import registry
from zarrkit.abc import ChunkKeyEncoding
from zarrkit.errors import UnknownExtensionError
from zarrkit.abc import names

SOURCE = """
from zarrkit.abc import ChunkKeyEncoding
from zarrkit.abc import names

class Iso(ChunkKeyEncoding):
    names = names("iso")
"""


class RuntimeOnly(ChunkKeyEncoding):
    names = names("runtime-only")


def test_install_and_register(fake_distribution, zarrkit_register):
    fake_distribution("iso-dist", entry_points={"zarrkit.chunk_key_encodings": {"iso": "iso_mod:Iso"}},
                      modules={"iso_mod": SOURCE})
    zarrkit_register("chunk_key_encoding", RuntimeOnly)
    assert registry.lookup("chunk_key_encoding", "iso").__name__ == "Iso"
    assert registry.lookup("chunk_key_encoding", "runtime-only") is RuntimeOnly


def test_nothing_leaks_into_the_next_test():
    assert "iso_mod" not in sys.modules
    for name in ("iso", "runtime-only"):
        with pytest.raises(UnknownExtensionError):
            registry.lookup("chunk_key_encoding", name)
'''


@pytest.mark.slow
def test_fixtures_undo_installs_and_registrations_after_each_test(tmp_path: Path) -> None:
    (tmp_path / "test_isolation.py").write_text(ISOLATION_TESTS)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_isolation.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout


# -- every first-party extension class is reachable -----------------------------------------------
KERNEL_BASES = {
    "zarrkit.abc.codec:Codec": "codec",
    "zarrkit.abc.data_type:DataType": "data_type",
    "zarrkit.abc.chunk_grid:ChunkGrid": "chunk_grid",
    "zarrkit.abc.chunk_key_encoding:ChunkKeyEncoding": "chunk_key_encoding",
    "zarrkit.abc.memory_layout:MemoryLayout": "memory_layout",
    "zarrkit.abc.storage_transformer:StorageTransformer": "storage_transformer",
    "zarrkit.abc.store:Store": "store",
}


def _kernel_bases() -> dict[type, str]:
    bases = {}
    for path, kind in KERNEL_BASES.items():
        module_name, class_name = path.split(":")
        bases[getattr(importlib.import_module(module_name), class_name)] = kind
    return bases


def _plugin_modules() -> list[str]:
    """Every module under plugins/ (zarrkit.plugins), without importing any."""
    import zarrkit.plugins

    return sorted(
        info.name
        for info in pkgutil.walk_packages(zarrkit.plugins.__path__, "zarrkit.plugins.")
        if not info.ispkg
    )


def _is_concrete(cls: type) -> bool:
    return not (
        cls.__name__.startswith("_") or vars(cls).get("abstract", False) or inspect.isabstract(cls)
    )


def _extension_classes(module_name: str, bases: dict[type, str]) -> list[tuple[str, type]]:
    """(kind, class) for concrete extension classes defined in the module (imported strictly)."""
    module = importlib.import_module(module_name)
    found = []
    for _, cls in inspect.getmembers(module, inspect.isclass):
        if cls.__module__ != module_name or not _is_concrete(cls):
            continue
        kinds = [kind for base, kind in bases.items() if issubclass(cls, base) and cls is not base]
        if kinds:
            found.append((kinds[0], cls))
    return found


def _entry_point_classes(kind: str) -> set[type]:
    rows = registry.get_registry(kind).load_all()
    return {
        cls for provider, cls, _ in rows if provider.origin == "entry point" and cls is not None
    }


def _reachable(cls: type, classes: set[type]) -> bool:
    """Whether an entry point's class is `cls`, or makes `cls` when it is constructed (the
    implementations it chooses between: the local store's POSIX and portable ones)."""
    return cls in classes or any(cls in getattr(c, "implementations", {}).values() for c in classes)


#: format plugins build their own unnamed extensions (the 2020 draft's chunk keys, v2's memory
#: layout as a codec): reached through the format's entry point, not one of their own
_FORMAT_PLUGINS = "zarrkit.plugins.formats."


def test_every_concrete_extension_class_under_plugins_is_reachable_by_entry_point() -> None:
    bases = _kernel_bases()
    unreachable = []
    for module_name in _plugin_modules():
        if module_name.startswith(_FORMAT_PLUGINS):
            continue
        for kind, cls in _extension_classes(module_name, bases):
            if not _reachable(cls, _entry_point_classes(kind)):
                unreachable.append(f"{kind}: {module_name}:{cls.__qualname__}")
    assert unreachable == [], (
        "no entry point resolves to these classes (declare them in pyproject.toml)"
    )


def test_every_format_plugin_module_is_reached_by_a_format_entry_point() -> None:
    """Run in a fresh process, so that what is imported is what the format entry points load."""
    code = textwrap.dedent(
        f"""
        import json, pkgutil, sys
        import zarrkit.plugins
        from zarrkit import entry_points
        from zarrkit.formats import GROUP, get_format
        names = sorted(row[0].name for row in entry_points.in_group(GROUP))
        assert all(get_format(name).name == name for name in names)
        modules = [
            info.name
            for info in pkgutil.walk_packages(zarrkit.plugins.__path__, "zarrkit.plugins.")
            if not info.ispkg and info.name.startswith({_FORMAT_PLUGINS!r})
        ]
        print(json.dumps([names, [m for m in modules if m not in sys.modules]]))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    names, missing = json.loads(out.stdout)
    assert {"v2", "v3-draft-2020"} <= set(names)
    assert missing == []
