"""What the package's tests share: the repository, and the command line
they compare against (``TANDEM_BIN``, else the workspace's release build)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import List

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "models" / "examples"


def cli_path() -> Path:
    path = Path(os.environ.get("TANDEM_BIN", ROOT / "target" / "release" / "tandem"))
    if not path.exists():
        pytest.fail(f"no command line at {path}: build it (cargo build --release) or set TANDEM_BIN")
    return path


def cli(*args: str, ok: bool = True) -> subprocess.CompletedProcess:
    """Runs the command line; with ``ok`` it must succeed."""
    done = subprocess.run([str(cli_path()), *map(str, args)], capture_output=True, text=True, cwd=ROOT)
    if ok and done.returncode != 0:
        pytest.fail(f"tandem {' '.join(map(str, args))} failed: {done.stderr}")
    return done


def cli_error(*args: str) -> str:
    """The message of a command that must fail (its ``error:`` line and
    what follows, without the prefix)."""
    done = cli(*args, ok=False)
    assert done.returncode != 0, f"tandem {' '.join(map(str, args))} succeeded"
    text = done.stderr
    return text[text.index("error: ") + len("error: ") :].rstrip("\n")


def read_csv(path: Path) -> "tuple[List[str], np.ndarray]":
    """A CSV file of the command line: its header and its values (parsed
    by Python's float, which reads the shortest round-trip form exactly)."""
    lines = path.read_text().splitlines()
    header = lines[0].split(",")
    rows = [[float(x) for x in line.split(",")] for line in lines[1:]]
    return header, np.array(rows, dtype=float).reshape(len(rows), len(header))


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal bit for bit (so -0.0 differs from 0.0, and NaN equals NaN)."""
    return a.shape == b.shape and bool(np.all(a.view(np.int64) == b.view(np.int64)))
