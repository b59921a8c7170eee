"""Runs the guide's examples (pages/*.py) with one library and writes what each printed.

    python runner.py zarr|zarrkit OUTPUT.json

run in the folder the examples may write to (they write relative paths such as
`data/example-1.zarr`). With `zarrkit`, only the imports change: `import zarr` becomes
`import zarrkit as zarr` and `from zarr... import` `from zarrkit... import`, as a user switching
would write them. Each example's record: its name, what it printed, and the exception it raised
(its class name and message) if it raised one; the examples after it go on.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path

PAGES = Path(__file__).parent / "pages"
#: the order of zarr-python's guide (its mkdocs navigation)
ORDER = [
    "arrays",
    "groups",
    "attributes",
    "storage",
    "config",
    "consolidated_metadata",
    "performance",
    "data_types",
]
_CELL = re.compile(r"^# %% (?P<name>\S+) session=(?P<session>\S+).*$", re.MULTILINE)


@dataclass
class Example:
    name: str
    session: str
    source: str


@dataclass
class Outcome:
    name: str
    printed: str
    raised: str | None


def examples(page: str) -> list[Example]:
    """The examples of one page, in order."""
    text = (PAGES / f"{page}.py").read_text()
    marks = list(_CELL.finditer(text))
    found = []
    for mark, following in zip(marks, [*marks[1:], None]):
        end = following.start() if following else len(text)
        found.append(Example(mark["name"], mark["session"], text[mark.end() : end]))
    return found


def as_zarrkit(source: str) -> str:
    """The example as a user switching to zarrkit writes it: only the imports change."""
    source = re.sub(r"^(\s*)import zarr\s*$", r"\1import zarrkit as zarr", source, flags=re.M)
    return re.sub(r"^(\s*)from zarr(\.|\s)", r"\1from zarrkit\2", source, flags=re.M)


def _memory_urls_as_without_fsspec() -> None:
    """zarr-python opens a `memory://name` URL as fsspec's memory filesystem when fsspec is
    installed (and prints `<FsspecStore(AsyncFileSystemWrapper, /name)>`), else as its own
    `ManagedMemoryStore` (printed `memory://name`), as its guide says. zarrkit's named memory
    store is the latter: the reference run takes that branch, while fsspec stays importable for
    the examples that ask for an `FsspecStore` by name."""
    import zarr.storage._common

    zarr.storage._common._has_fsspec = False


def run(library: str) -> list[Outcome]:
    if library == "zarr":
        _memory_urls_as_without_fsspec()
    outcomes = []
    sessions: dict[str, dict[str, object]] = {}
    for page in ORDER:
        for example in examples(page):
            source = as_zarrkit(example.source) if library == "zarrkit" else example.source
            namespace = sessions.setdefault(example.session, {"__name__": "__main__"})
            printed = io.StringIO()
            raised = None
            with contextlib.redirect_stdout(printed):
                try:
                    exec(compile(source, example.name, "exec"), namespace)
                except Exception as error:  # (recorded: the comparison says which raised)
                    raised = f"{type(error).__name__}: {error}"
                    detail = traceback.format_exc(limit=-3)
                    print(f"[{example.name}] {detail}", file=sys.stderr)
            outcomes.append(Outcome(example.name, printed.getvalue(), raised))
    return outcomes


if __name__ == "__main__":
    library, output = sys.argv[1], sys.argv[2]
    Path(output).write_text(json.dumps([asdict(o) for o in run(library)], indent=1))
