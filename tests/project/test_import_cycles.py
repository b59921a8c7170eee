"""No import cycles in the zarrkit package, judged from its source.

The graph is built from the AST of every module of the distribution (kernel, first-party
plugins, integrations), laid out as installed (`[tool.setuptools] package-dir`), and counts:

- imports at module level and imports inside functions and methods: a cycle hidden in a
  function is still two modules that cannot be understood (or moved) one without the other;
- the packages above an imported module (`from .formats import v2` runs `formats/__init__`),
  except the importing module's own packages (`zarrkit`, for every module): Python runs
  those before the importing module itself, so they are no dependency of it.

It does not count imports under `if TYPE_CHECKING:`: they never run, and naming a type of
another module in an annotation is not a dependency of behaviour. Nor does it follow
`importlib.import_module` of a computed name (the lazy re-exports of `zarrkit/__init__.py`,
the format table of `formats/__init__.py`).

A cycle is a strongly connected component of that graph; the failure names a path around it.
"""

from __future__ import annotations

import ast
import textwrap
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Cycles that exist on the branch this test was written on, outside its author's area, each
#: being broken by another change in flight (issue 27). An entry is the set of modules of one
#: cycle; the test fails on any other cycle, and on an entry that no longer is one. Whoever
#: merges those changes empties this.
ALLOWED_CYCLES: list[frozenset[str]] = []


# -- the graph ----------------------------------------------------------------------------------
def package_modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the distribution, by its installed dotted name."""
    config = tomllib.loads((root / "pyproject.toml").read_text())
    package_dirs = config["tool"]["setuptools"]["package-dir"]
    modules: dict[str, Path] = {}
    # deepest mapping first, so `plugins/` is zarrkit.plugins, not zarrkit's folder of that name
    for package, folder in sorted(package_dirs.items(), key=lambda kv: -kv[0].count(".")):
        base = root / folder
        for path in sorted(base.rglob("*.py")):
            parts = path.relative_to(base).with_suffix("").parts
            if "__pycache__" in parts:
                continue
            name = ".".join(
                (package, *parts[:-1], *([] if parts[-1] == "__init__" else parts[-1:]))
            )
            modules.setdefault(name, path)
    return modules


def import_graph(modules: Mapping[str, Path]) -> dict[str, set[str]]:
    """module -> the modules of `modules` it imports (see the module docstring for what counts)."""
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        targets: set[str] = set()
        for imported in _imports(ast.parse(path.read_text(), str(path)), name, is_package):
            targets.update(_known(imported, modules))
        parts = name.split(".")
        targets -= {".".join(parts[:i]) for i in range(1, len(parts) + 1)}  # itself, its packages
        graph[name] = targets
    return graph


def _imports(tree: ast.Module, module: str, is_package: bool) -> Iterator[str]:
    """Dotted names each import statement of `tree` may load (`pkg.name` for `from pkg import
    name`, which is a submodule or an attribute: `_known` decides)."""
    package = module if is_package else module.rpartition(".")[0]
    for node in _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names if alias.name != "*")


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of `tree`, functions' bodies included, except under `if TYPE_CHECKING:`."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _known(dotted: str, modules: Mapping[str, Path]) -> set[str]:
    """The modules of `modules` importing `dotted` runs: the deepest existing one and the
    packages above it."""
    parts = dotted.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)} & set(modules)


# -- cycles -------------------------------------------------------------------------------------
def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Each strongly connected component of more than one module, as a path around it
    (first module repeated at the end), sorted for a stable message."""
    return sorted(_path_around(c, graph) for c in _components(graph) if len(c) > 1)


def _components(graph: Mapping[str, Iterable[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components, iteratively (no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[set[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                out.append(component)
    return out


def _path_around(component: set[str], graph: Mapping[str, Iterable[str]]) -> list[str]:
    """A shortest cycle through the component's first module, by breadth-first search."""
    start = min(component)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph.get(node, ())):
                if child not in component:
                    continue
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if child not in came_from:
                    came_from[child] = node
                    following.append(child)
        frontier = following
    raise AssertionError(f"{sorted(component)} is not strongly connected")


def _describe(cycle: list[str]) -> str:
    return " -> ".join(cycle)


# -- the tests ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph(package_modules())


def test_the_graph_sees_imports_inside_functions(graph: dict[str, set[str]]) -> None:
    """Guard against a graph that cannot fail: `zarrkit.registry` imports the hooks at module
    level, and `data_type` imports the registry only inside a function."""
    assert len(graph) > 100
    assert "zarrkit.hooks" in graph["zarrkit.registry"]
    assert "zarrkit.registry" in graph["zarrkit.data_type"]


def test_no_import_cycles_beyond_the_allowed_ones(graph: dict[str, set[str]]) -> None:
    """Judged by whole strongly connected components, so a module joining an allowed cycle
    fails too, though the path named may not pass through it."""
    unexpected = [
        c
        for c in _components(graph)
        if len(c) > 1 and not any(c <= allowed for allowed in ALLOWED_CYCLES)
    ]
    assert not unexpected, "import cycles:\n" + "\n".join(
        f"{_describe(_path_around(c, graph))} (all of {sorted(c)})"
        for c in sorted(unexpected, key=min)
    )


def test_each_allowed_cycle_still_exists(graph: dict[str, set[str]]) -> None:
    """An entry of ALLOWED_CYCLES whose cycle is gone must go too, so the list only shrinks."""
    found = [set(c) for c in cycles(graph)]
    stale = [sorted(allowed) for allowed in ALLOWED_CYCLES if not any(c & allowed for c in found)]
    assert not stale, f"these cycles are broken now; remove them from ALLOWED_CYCLES: {stale}"


def test_hooks_and_registry_form_no_cycle(graph: dict[str, set[str]]) -> None:
    assert not any({"zarrkit.hooks", "zarrkit.registry"} <= set(c) for c in cycles(graph))


# -- the check fails on a cycle -------------------------------------------------------------------
SYNTHETIC = {
    "pkg/__init__.py": "",
    "pkg/a.py": "from . import b\n",
    # the way back is hidden in a function, as api <-> hierarchy was
    "pkg/b.py": "def later():\n    from .sub.c import thing\n    return thing\n",
    "pkg/sub/__init__.py": "",
    "pkg/sub/c.py": "import pkg.a\nthing = 1\n",
    # an annotation-only import is not a dependency
    "pkg/d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .e import E\n",
    "pkg/e.py": "from .d import TYPE_CHECKING\n",
}


def _synthetic(tmp_path: Path, files: Mapping[str, str]) -> dict[str, set[str]]:
    for rel, source in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(textwrap.dedent(source))
    (tmp_path / "pyproject.toml").write_text('[tool.setuptools]\npackage-dir = { "pkg" = "pkg" }\n')
    return import_graph(package_modules(tmp_path))


def test_a_cycle_through_a_function_is_found_and_named(tmp_path: Path) -> None:
    graph = _synthetic(tmp_path, SYNTHETIC)
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.sub.c", "pkg.a"]]
    message = _describe(cycles(graph)[0])
    assert message == "pkg.a -> pkg.b -> pkg.sub.c -> pkg.a"


def test_a_type_checking_import_makes_no_cycle(tmp_path: Path) -> None:
    graph = _synthetic(tmp_path, SYNTHETIC)
    assert graph["pkg.d"] == set()
    assert graph["pkg.e"] == {"pkg.d"}


def test_the_real_check_fails_on_a_synthetic_cycle(tmp_path: Path) -> None:
    """The assertion of `test_no_import_cycles_beyond_the_allowed_ones`, on a graph with one."""
    graph = _synthetic(tmp_path, SYNTHETIC)
    with pytest.raises(AssertionError, match=r"pkg\.a -> pkg\.b -> pkg\.sub\.c -> pkg\.a"):
        test_no_import_cycles_beyond_the_allowed_ones(graph)
