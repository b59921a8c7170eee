"""Checks every extension suite makes of a plugin's JSON: it reads back what it writes, it
refuses a bad configuration with a `MetadataError`, and an odd value in any field gives a
built extension or a zarrkit error, never a raw exception from deep inside the plugin."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import pytest

from zarrkit.abc import Extension
from zarrkit.errors import MetadataError, ZarrkitError

E = TypeVar("E", bound=Extension)

#: values put in each configuration field in turn: wrong types and out-of-range numbers
ODD_VALUES: tuple[Any, ...] = (None, "x", -1, 0, 1.5, True, [], {}, [None], [-1], [[0]], {"a": 1})


def reread(ext: E, fmt: str) -> E:
    """`ext` written in `fmt`, through real JSON text, and read back by its class."""
    doc = json.loads(json.dumps(ext.to_json(fmt)))
    name, configuration = (
        (doc, {}) if isinstance(doc, str) else (doc["name"], doc.get("configuration", {}))
    )
    return type(ext).from_json(name, configuration, fmt)  # type: ignore[return-value]


def check_json_round_trip(ext: Extension, formats: Iterable[str]) -> None:
    """In each format, `ext` reads back equal, and writes the same JSON again."""
    for fmt in formats:
        again = reread(ext, fmt)
        assert again == ext, f"{fmt}: {ext.to_json(fmt)!r} reads back as {again!r}"
        assert again.to_json(fmt) == ext.to_json(fmt), fmt


def check_bad_configurations(ext: Extension, bad: Sequence[dict[str, Any]]) -> None:
    """An unknown field, and each of `bad`, is refused with a MetadataError."""
    fmt = type(ext).names.formats()[0]
    name, good = ext.written_name(fmt), ext.configuration(fmt)
    for configuration in ({**good, "no_such_field": 1}, *bad):
        with pytest.raises(MetadataError):
            type(ext).from_json(name, configuration, fmt)


def check_odd_values(ext: E, kind: type[E], then: Callable[[E], None]) -> None:
    """Each configuration field replaced by each of `ODD_VALUES`: the class builds a `kind`
    on which `then` (the suite's use of it) passes, or a zarrkit error says why."""
    fmt = type(ext).names.formats()[0]
    name, good = ext.written_name(fmt), ext.configuration(fmt)
    for field, value in itertools.product(good, ODD_VALUES):
        try:
            built = type(ext).from_json(name, {**good, field: value}, fmt)
            assert isinstance(built, kind), f"from_json gave {built!r}"
            then(built)
        except ZarrkitError:
            continue
        except AssertionError:
            raise
        except Exception as exc:  # what the suites are here to catch
            raise AssertionError(
                f"configuration field {field!r} = {value!r} raised {type(exc).__name__}: "
                f"{exc} (refuse it with a MetadataError naming the field)"
            ) from exc
