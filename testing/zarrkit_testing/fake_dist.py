"""Real (not mocked) installed distributions for testing plugin discovery.

Mocking `importlib.metadata` tests the mock; these helpers instead write the files pip would
write — a `*.dist-info` folder with METADATA, entry_points.txt and RECORD, plus the modules —
so that discovery, distribution names and versions go through the real machinery.

Nothing from zarrkit is imported at module import: pytest loads the plugin using this in every
run, and the registry is only needed once a distribution is actually installed.
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import re
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

#: group -> {entry-point name -> "module:attr"}
EntryPoints = Mapping[str, Mapping[str, str]]


def make_distribution(
    site_dir: Path,
    name: str,
    version: str = "1.0",
    entry_points: EntryPoints | None = None,
    modules: Mapping[str, str] | None = None,
) -> Path:
    """Write distribution `name` into `site_dir` as an installer would; return its dist-info.

    `modules` maps dotted module names to source text; parent packages get an empty
    `__init__.py` unless given. Nothing is put on `sys.path`: see `installed()`.
    """
    site_dir = Path(site_dir)
    site_dir.mkdir(parents=True, exist_ok=True)
    written = [_write(site_dir, path, text) for path, text in _module_files(modules or {}).items()]
    dist_info = site_dir / f"{_dist_info_stem(name)}-{version}.dist-info"
    dist_info.mkdir(exist_ok=True)
    written.append(
        _write(site_dir, _rel(dist_info / "METADATA", site_dir), _metadata(name, version))
    )
    ep_text = _entry_points_txt(entry_points or {})
    written.append(_write(site_dir, _rel(dist_info / "entry_points.txt", site_dir), ep_text))
    record = dist_info / "RECORD"
    record.write_text(_record(site_dir, written, record), encoding="utf-8")
    return dist_info


@contextmanager
def installed(site_dir: Path) -> Iterator[Path]:
    """Make the distributions in `site_dir` visible for the duration of the block.

    On exit the folder leaves `sys.path`, every module imported from it is dropped from
    `sys.modules` (so a later test cannot see a stale class), and the registries rescan.
    """
    entry = str(Path(site_dir))
    sys.path.append(entry)
    rescan()
    try:
        yield Path(site_dir)
    finally:
        while entry in sys.path:
            sys.path.remove(entry)
        purge_modules(Path(site_dir))
        rescan()


def rescan() -> None:
    """Make newly written or removed distributions visible to importlib and zarrkit."""
    importlib.invalidate_caches()
    from zarrkit import registry

    registry.refresh()


def purge_modules(site_dir: Path) -> list[str]:
    """Forget every imported module whose file lies under `site_dir`; return their names."""
    root = Path(site_dir).resolve()
    gone = []
    for mod_name, module in list(sys.modules.items()):
        origin = getattr(module, "__file__", None)
        if origin and Path(origin).resolve().is_relative_to(root):
            del sys.modules[mod_name]
            gone.append(mod_name)
    return gone


# -- file contents ------------------------------------------------------------------------------
def _dist_info_stem(name: str) -> str:
    """The escaped project name used in dist-info folder names (PEP 427/503)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def _metadata(name: str, version: str) -> str:
    return f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"


def _entry_points_txt(entry_points: EntryPoints) -> str:
    sections = []
    for group, table in entry_points.items():
        lines = [f"[{group}]", *(f"{ep_name} = {value}" for ep_name, value in table.items())]
        sections.append("\n".join(lines) + "\n")
    return "\n".join(sections)


def _module_files(modules: Mapping[str, str]) -> dict[str, str]:
    """Relative file path -> source for each module, packages as `pkg/__init__.py`."""
    packages = {m.rsplit(".", i)[0] for m in modules for i in range(1, m.count(".") + 1)}
    files: dict[str, str] = {f"{p.replace('.', '/')}/__init__.py": "" for p in packages}
    for mod_name, source in modules.items():
        base = mod_name.replace(".", "/")
        files[f"{base}/__init__.py" if mod_name in packages else f"{base}.py"] = source
    return files


def _write(site_dir: Path, rel_path: str, text: str) -> str:
    target = site_dir / rel_path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return rel_path


def _rel(path: Path, site_dir: Path) -> str:
    return path.relative_to(site_dir).as_posix()


def _record(site_dir: Path, rel_paths: list[str], record: Path) -> str:
    """RECORD lines `path,sha256=<urlsafe b64>,size`; RECORD lists itself without a hash."""
    lines = []
    for rel_path in rel_paths:
        data = (site_dir / rel_path).read_bytes()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append(f"{rel_path},sha256={digest},{len(data)}")
    lines.append(f"{_rel(record, site_dir)},,")
    return "\n".join(lines) + "\n"
