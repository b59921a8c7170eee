"""`import zarrkit` alone gives its submodules by attribute, as `import zarr` does
(`zarr.config.set(...)`, `zarr.errors...`), while staying cheap: each loads on first access, and
the settings and the error tree load without numpy."""

from __future__ import annotations

import subprocess
import sys

import pytest


def run(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.mark.parametrize("name", ["config", "errors", "abc", "storage"])
def test_a_bare_import_reaches_the_submodule(name: str) -> None:
    printed = run(f"import zarrkit; print(zarrkit.{name}.__name__)")
    assert printed == f"zarrkit.{name}"


def test_the_readme_override_works_at_the_start_of_a_program() -> None:
    code = (
        "import zarrkit\n"
        "with zarrkit.config.override(write_empty_chunks=True):\n"
        "    print(zarrkit.config.get().write_empty_chunks)\n"
        "print(issubclass(zarrkit.errors.NodeNotFoundError, KeyError))\n"
    )
    assert run(code).split() == ["True", "True"]


def test_settings_and_errors_load_without_numpy() -> None:
    code = (
        "import sys, zarrkit\n"
        "zarrkit.config.get(); zarrkit.errors.ZarrkitError\n"
        "print('numpy' in sys.modules)\n"
    )
    assert run(code) == "False"


def test_an_unknown_attribute_is_still_an_attribute_error() -> None:
    import zarrkit

    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        zarrkit.nothing_here  # noqa: B018
    assert {"config", "errors", "abc", "storage"} <= set(dir(zarrkit))
