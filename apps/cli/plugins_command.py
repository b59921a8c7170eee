"""`zarrkit plugins`: installed extensions and hook plugins, listed from distribution metadata
without importing them; `--check` loads each and reports load errors and name collisions, and
which provider answers each name several answer to (and why)."""

from __future__ import annotations

import argparse
import importlib.metadata as md
import json
import re
import sys
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, TextIO, TypeAlias

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

#: Listing order and headings; "hook" is the `zarrkit.hooks` group of hook modules.
KIND_TITLES: dict[str, str] = {
    "data_type": "data types",
    "codec": "codecs",
    "chunk_grid": "chunk grids",
    "chunk_key_encoding": "chunk key encodings",
    "memory_layout": "memory layouts",
    "storage_transformer": "storage transformers",
    "store": "stores",
    "metadata_field": "metadata fields",
    "hook": "hook plugins",
}


# == zarrkit plugins ==============================================================================
@dataclass
class Problem:
    """Something `plugins --check` found wrong with one extension or hook plugin."""

    category: str  # "load error", "collision" or "no names"
    message: str


@dataclass
class PluginRow:
    """One provider of one extension name (or one hook plugin), as listed."""

    kind: str
    name: str
    value: str
    distribution: str | None
    version: str | None
    origin: str  # "entry point", "runtime" or "hook"
    loaded: bool  # its module was imported before anything was listed or checked
    names: dict[str, dict[str, Any]] | None = None  # --check: per format, as written/read
    problems: list[Problem] = field(default_factory=list)
    #: --check: for each name it shares with other providers, who answers it and why
    precedence: list[str] = field(default_factory=list)


def add_command(commands: Commands) -> None:
    cmd = commands.add_parser(
        "plugins",
        help="list installed extensions and hook plugins",
        description="List every installed extension (by kind) and hook plugin, with the "
        "distribution providing it, without importing any of them.",
    )
    cmd.add_argument(
        "--kind", type=_kind_arg, metavar="KIND", help="only this kind: " + ", ".join(KIND_TITLES)
    )
    cmd.add_argument(
        "--check",
        action="store_true",
        help="import everything, show names per format and report load errors, "
        "name collisions and classes without names (exit code 1 if any)",
    )
    cmd.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    cmd.epilog = (
        "LOADED tells whether the module was already imported when listed: zarrkit "
        "imports a plugin only when its name is used."
    )
    cmd.set_defaults(run=_run_plugins)


def _kind_arg(text: str) -> str:
    """Accept `codec`, `codecs`, `chunk-grid`, `hooks`...; argparse reports anything else."""
    kind = text.strip().lower().replace("-", "_")
    for candidate in (kind, kind.removesuffix("s")):
        if candidate in KIND_TITLES:
            return candidate
    raise argparse.ArgumentTypeError(
        f"unknown kind {text!r}; expected one of {', '.join(KIND_TITLES)}"
    )


def _run_plugins(args: argparse.Namespace) -> int:
    kinds = [args.kind] if args.kind else list(KIND_TITLES)
    rows = list_plugins(kinds)
    problems = check_plugins(rows, kinds) if args.check else []
    rows.sort(key=_sort_key)
    if args.json:
        json.dump([asdict(row) for row in rows], sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print_table(rows, kinds, sys.stdout, checked=args.check)
        if args.check:
            print_precedence(rows, sys.stdout)
            print_problems(problems, sys.stdout)
    return 1 if problems else 0


def _sort_key(row: PluginRow) -> tuple:
    """By kind in listing order, then name, then distribution."""
    return (list(KIND_TITLES).index(row.kind), row.name.lower(), row.name, row.distribution or "")


# -- listing (imports no plugin) ------------------------------------------------------------------
def list_plugins(kinds: Sequence[str]) -> list[PluginRow]:
    """Rows for every declared provider of `kinds`, from distribution metadata only."""
    rows: list[PluginRow] = []
    for kind in kinds:
        rows.extend(_hook_rows() if kind == "hook" else _extension_rows(kind))
    return rows


def _extension_rows(kind: str) -> list[PluginRow]:
    from zarrkit import registry

    return [_row(kind, p) for p in registry.get_registry(kind).providers()]


def _row(kind: str, provider: Any) -> PluginRow:
    version = provider.version or (
        _version_of(provider.distribution) if provider.distribution else None
    )
    return PluginRow(
        kind,
        provider.name,
        provider.value,
        provider.distribution,
        version,
        provider.origin,
        provider.loaded,
    )


def _hook_rows() -> list[PluginRow]:
    from zarrkit import hooks

    return [
        PluginRow("hook", ep.name, ep.value, dist, version, "entry point", ep.module in sys.modules)
        for ep, dist, version in hooks.installed_hook_plugins()
    ]


def _version_of(distribution: str) -> str | None:
    try:
        return md.version(distribution)
    except md.PackageNotFoundError:
        return None


# -- checking (imports everything) ----------------------------------------------------------------
def check_plugins(rows: list[PluginRow], kinds: Sequence[str]) -> list[Problem]:
    """Load every provider of `kinds`, fill in names and problems; return all problems.

    Rows for extensions that hook plugins register at run time are appended to `rows`.
    """
    problems: list[Problem] = []
    with warnings.catch_warnings():  # skipped hook plugins are reported as problems instead
        warnings.simplefilter("ignore", RuntimeWarning)
        for kind in kinds:
            problems.extend(_check_hooks(rows) if kind == "hook" else _check_kind(kind, rows))
    return problems


def _check_hooks(rows: list[PluginRow]) -> list[Problem]:
    from zarrkit import hooks

    problems = []
    for failure in hooks.failures():
        # A second hook plugin of one name is skipped unloaded: report it as the collision it is.
        category = "collision" if "name is taken" in failure.error else "load error"
        problem = Problem(category, str(failure))
        problems.append(problem)
        for row in rows:
            if (row.kind, row.name, row.value) == (
                "hook",
                failure.name,
                failure.value,
            ) and row.distribution == failure.distribution:
                row.problems.append(problem)
    return problems


def _check_kind(kind: str, rows: list[PluginRow]) -> list[Problem]:
    from zarrkit import registry

    reg = registry.get_registry(kind)
    by_key = {(r.name, r.value, r.distribution, r.origin): r for r in rows if r.kind == kind}
    problems: list[Problem] = []
    try:
        loaded = reg.load_all()
    except Exception as exc:  # report, rather than crash on, whatever else a plugin breaks
        return [Problem("load error", f"loading the {kind} extensions failed: {exc!r}")]
    for provider, cls, error in loaded:
        key = (provider.name, provider.value, provider.distribution, provider.origin)
        row = by_key.get(key)
        if row is None:  # registered by a hook plugin while loading
            row = by_key[key] = _row(kind, provider)
            rows.append(row)
        problems.extend(_check_row(row, cls, error))
    conflicts = _conflicts(reg)
    problems.extend(_check_collisions(kind, conflicts, by_key))
    problems.extend(_check_shared(kind, _shared_names(reg, loaded), set(conflicts), by_key))
    return problems


@dataclass(frozen=True)
class Shared:
    """A name more than one installed class answers to, and what a lookup of it gives."""

    name: str
    format: str
    providers: tuple[Any, ...]
    #: the class a lookup returns, or the error it raises
    outcome: Any
    #: the provider of that class, when there is one
    winner: Any = None


def _conflicts(reg: Any) -> dict[str, list[Any]]:
    """Entry-point names declared by more than one distribution."""
    return {
        name: providers
        for name, providers in reg.entries().items()
        if len({_normalized(p.distribution or "") for p in providers}) > 1
    }


def _shared_names(reg: Any, loaded: list[tuple[Any, type | None, str | None]]) -> list[Shared]:
    """Every name (in a format) that more than one installed class answers to, with who
    answers a lookup of it and why, or the error it raises: the registry's own rule
    (`registry.precedence`), so what `--check` reports is what a lookup does."""
    from zarrkit import registry

    classes = [(p, c) for p, c, _err in loaded if c is not None and p.entry_point]
    spelled: set[tuple[str, str]] = set()
    for _provider, cls in classes:
        names = getattr(cls, "names", None)
        for fmt in getattr(names, "formats", lambda: ())():
            spelling = names.get(fmt)  # type: ignore[union-attr]
            spelled.update((name, fmt) for name in (spelling.name, *spelling.aliases) if name)
    out = []
    for name, fmt in sorted(spelled):
        try:
            candidates = [(p, c) for p, c in classes if c.matches_name(name, fmt)]  # type: ignore[attr-defined]
        except Exception:  # a faulty matches_name: reported when that class is used
            continue
        if len({c for _p, c in candidates}) < 2:
            continue
        exact = [(p, c) for p, c in candidates if p.name == name]
        outcome = registry.precedence(reg.kind, name, fmt, exact or candidates)
        winner = next((p for p, c in candidates if c is outcome), None)
        out.append(Shared(name, fmt, tuple(p for p, _c in candidates), outcome, winner))
    return out


def _check_shared(
    kind: str, shared: list[Shared], reported: set[str], by_key: dict[tuple, PluginRow]
) -> list[Problem]:
    """Names several classes answer to: who wins (a note on each row, not a problem), or the
    collision a lookup raises (a problem unless `_check_collisions` reported the name)."""
    from zarrkit.errors import PluginConflictError

    problems = []
    for item in shared:
        rows = [by_key.get((p.name, p.value, p.distribution, p.origin)) for p in item.providers]
        about = f"{kind} {item.name!r} ({item.format})"
        outcome = item.outcome
        if isinstance(outcome, PluginConflictError):
            if item.name in reported:
                continue
            problem = Problem("collision", f"{about}: {outcome}")
            problems.append(problem)
            for row in rows:
                if row is not None:
                    row.problems.append(problem)
            continue
        if isinstance(outcome, type) and item.winner is not None:
            others = ", ".join(_label(p) for p in item.providers if p is not item.winner)
            why = _why(kind, outcome, item)
            note = f"{about}: {_label(item.winner)} {why}, over {others}"
        else:  # several classes of one distribution: the metadata says which is meant
            dist = item.providers[0].distribution or item.providers[0].origin
            note = (
                f"{about}: several classes of {dist} answer it; the rest of the metadata "
                "(or a more precise argument) says which is meant"
            )
        for row in rows:
            if row is not None:
                row.precedence.append(note)
    return problems


def _why(kind: str, cls: type, item: Any) -> str:
    from zarrkit import config, registry

    if config.get().prefer.get((kind, item.name)) is not None:
        return "is preferred (ZARRKIT_PREFER)"
    if registry.spelled_by(cls, item.name, item.format):
        return "names it"
    return "is the entry point of that exact name"


def _label(provider: Any) -> str:
    dist = provider.distribution or provider.origin
    version = f" {provider.version}" if provider.version else ""
    return f"{dist}{version} ({provider.value})"


def _check_row(row: PluginRow, cls: type | None, error: str | None) -> list[Problem]:
    label = f"{row.kind} {row.name!r} from {_provenance(row)} ({row.value})"
    names = getattr(cls, "names", None)
    if cls is None:
        found = [Problem("load error", f"{label} failed to load: {error}")]
    elif names is None:
        found = [Problem("no names", f"{label}: {cls.__qualname__} declares no `names`")]
    else:
        row.names = _names_table(names)
        found = []
    row.problems.extend(found)
    return found


def _names_table(names: Any) -> dict[str, dict[str, Any]]:
    """Per format: the name written, the aliases also read, and the family pattern."""
    table = {}
    for fmt in names.formats():
        spelling = names.get(fmt)
        table[fmt] = {
            "name": spelling.name,
            "aliases": list(spelling.aliases),
            "pattern": spelling.pattern,
        }
    return table


def _check_collisions(
    kind: str, conflicts: dict[str, list[Any]], by_key: dict[tuple, PluginRow]
) -> list[Problem]:
    """One problem per name declared by several distributions, unless a preference settles it."""
    from zarrkit import config

    problems = []
    for name, providers in sorted(conflicts.items()):
        dists = sorted(f"{p.distribution} {p.version or ''}".strip() for p in providers)
        preferred = config.get().prefer.get((kind, name))
        if preferred is not None and any(_same_dist(p.distribution, preferred) for p in providers):
            continue
        problem = Problem(
            "collision",
            (
                f"{kind} {name!r} is provided by more than one distribution: {', '.join(dists)}; "
                f"choose one with ZARRKIT_PREFER='{kind}:{name}=<distribution>'"
            ),
        )
        problems.append(problem)
        for p in providers:
            row = by_key.get((p.name, p.value, p.distribution, p.origin))
            if row is not None:
                row.problems.append(problem)
    return problems


def _same_dist(a: str | None, b: str) -> bool:
    """Distribution names compared as packaging normalizes them (PEP 503)."""
    return a is not None and _normalized(a) == _normalized(b)


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


# -- output ---------------------------------------------------------------------------------------
COLUMNS = ("NAME", "DISTRIBUTION", "ENTRY POINT", "LOADED")


def print_table(rows: list[PluginRow], kinds: Sequence[str], out: TextIO, *, checked: bool) -> None:
    """Rows grouped by kind under a heading, columns aligned across all groups."""
    cells = {id(row): _cells(row, checked) for row in rows}
    header = COLUMNS + (("STATUS",) if checked else ())
    widths = [max([len(h)] + [len(c[i]) for c in cells.values()]) for i, h in enumerate(header)]
    for index, kind in enumerate(kinds):
        if index:
            out.write("\n")
        out.write(f"{KIND_TITLES[kind]}:\n")
        group = [row for row in rows if row.kind == kind]
        if not group:
            out.write("  (none installed)\n")
            continue
        out.write(_line(header, widths))
        for row in group:
            out.write(_line(cells[id(row)], widths))
            for fmt, spelling in (row.names or {}).items():
                out.write(f"      {fmt}: {_describe_spelling(spelling)}\n")


def _cells(row: PluginRow, checked: bool) -> tuple[str, ...]:
    cells: tuple[str, ...] = (row.name, _provenance(row), row.value, "yes" if row.loaded else "no")
    if checked:
        cells += (", ".join(sorted({p.category for p in row.problems})) or "ok",)
    return cells


def _provenance(row: PluginRow) -> str:
    if row.distribution is None:
        return f"({row.origin})"
    return f"{row.distribution} {row.version}" if row.version else row.distribution


def _line(cells: Sequence[str], widths: Sequence[int]) -> str:
    padded = [cell.ljust(width) for cell, width in zip(cells, widths)]
    return ("  " + "  ".join(padded)).rstrip() + "\n"


def _describe_spelling(spelling: dict[str, Any]) -> str:
    parts = [f"writes {spelling['name']!r}" if spelling["name"] else "writes nothing"]
    if spelling["aliases"]:
        parts.append("also reads " + ", ".join(repr(a) for a in spelling["aliases"]))
    if spelling["pattern"]:
        parts.append(f"matches /{spelling['pattern']}/")
    return "; ".join(parts)


def print_precedence(rows: list[PluginRow], out: TextIO) -> None:
    """Who answers each name several providers answer to: how a lookup will choose."""
    notes = list(dict.fromkeys(note for row in rows for note in row.precedence))
    if notes:
        out.write("\nnames several providers answer to (who answers a lookup):\n")
        for note in notes:
            out.write(f"  {note}\n")


def print_problems(problems: list[Problem], out: TextIO) -> None:
    unique = list({(p.category, p.message): p for p in problems}.values())
    if not unique:
        out.write("\nno problems found\n")
        return
    out.write(f"\n{len(unique)} problem{'s' if len(unique) != 1 else ''} found:\n")
    for problem in unique:
        out.write(f"  [{problem.category}] {problem.message}\n")
