"""zarr-python 2.18 in a virtual environment of its own, driven through subprocesses.

zarr-python 2 and 3 cannot share an environment, so the interop tests for Zarr v2 and the 2020
draft (zarr-python 2's experimental v3 mode) build a second venv once and cache it: under
``$ZARRKIT_TEST_CACHE`` or ``~/.cache/zarrkit-tests``, keyed by the requirements, so a later run
reuses it. A test hands it a script and JSON arguments and gets JSON back.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import venv
from pathlib import Path
from typing import Any

REQUIREMENTS = ("zarr>=2.18,<2.19", "numcodecs<0.16", "numpy<2.3")

_PRELUDE = """
import base64, json, os, sys
import numpy as np
import zarr
ARGS = json.loads(sys.stdin.read())
def b64(a):
    a = np.ascontiguousarray(a)
    return {"dtype": a.dtype.str if a.dtype.names is None else a.dtype.descr,
            "shape": list(a.shape), "data": base64.b64encode(a.tobytes()).decode()}
def unb64(d):
    dt = d["dtype"]
    dt = np.dtype([tuple(f) for f in dt] if isinstance(dt, list) else dt)
    return np.frombuffer(base64.b64decode(d["data"]), dtype=dt).reshape(d["shape"]).copy()
RESULT = None
"""


def cache_root() -> Path:
    root = os.environ.get("ZARRKIT_TEST_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "zarrkit-tests"


def _host_python() -> str:
    """The running interpreter builds the venv: same Python version as the tests."""
    return sys.executable


class Zarr2:
    """A cached venv with zarr-python 2.18; `run` executes a script in it."""

    def __init__(self, python: Path):
        self.python = python

    @classmethod
    def ensure(cls) -> Zarr2:
        key = hashlib.sha256(repr((REQUIREMENTS, sys.version_info[:2])).encode()).hexdigest()[:12]
        where = cache_root() / f"zarr2-{key}"
        python = where / "bin" / "python"
        done = where / ".complete"
        if not done.exists():
            venv.EnvBuilder(with_pip=True, clear=True).create(where)
            subprocess.run(
                [
                    str(python),
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    *REQUIREMENTS,
                ],
                check=True,
            )
            done.write_text("ok")
        return cls(python)

    def run(self, script: str, *, experimental_v3: bool = False, **args: Any) -> Any:
        """Run `script` (which may set RESULT) with `ARGS` = args; return RESULT, decoded."""
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        if experimental_v3:
            env["ZARR_V3_EXPERIMENTAL_API"] = "1"
        code = (
            _PRELUDE + textwrap.dedent(script) + "\nprint('\\n@@RESULT@@' + json.dumps(RESULT))\n"
        )
        proc = subprocess.run(
            [str(self.python), "-c", code],
            input=json.dumps(args),
            capture_output=True,
            text=True,
            env=env,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"zarr-python 2 script failed:\n{proc.stderr[-4000:]}")
        return json.loads(proc.stdout.rsplit("@@RESULT@@", 1)[1])

    def version(self) -> str:
        return self.run("RESULT = zarr.__version__")
