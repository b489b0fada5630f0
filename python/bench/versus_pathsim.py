"""The cruise control to 1000 s as a whole ``tandem sim`` process (start-up,
compilation to machine code, the run and its CSV) against the same
diagram in PathSim, in this process, in the same run.

    pip install pathsim==0.27.1
    python python/bench/versus_pathsim.py [--stop S]

Goal: Tandem at least 1000 times quicker (printed, not asserted). The
PathSim model is ``sweep.py``'s (the discrete PID as its transfer function,
RK4 at 10 ms, as the example's own settings); the final speeds are
printed side by side."""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

from sweep import CRUISE, ROOT, pathsim_run

GOAL = 1000.0
TANDEM = ROOT / "target" / "release" / "tandem"


def tandem_run(stop: float, out: Path) -> "tuple[float, float]":
    """Wall time of a whole `tandem sim` process, and the final speed it wrote."""
    start = time.perf_counter()
    subprocess.run([TANDEM, "sim", CRUISE, "--stop", str(stop), "--out", out], check=True, capture_output=True)
    wall = time.perf_counter() - start
    last = out.read_text().strip().splitlines()[-1].split(",")
    header = out.read_text().splitlines()[0].split(",")
    return wall, float(last[header.index("v")])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stop", type=float, default=1000.0)
    parser.add_argument("--repeat", type=int, default=5, help="tandem runs, the median taken")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        runs = sorted(tandem_run(args.stop, Path(tmp) / "cruise.csv") for _ in range(args.repeat))
    tandem_wall, tandem_v = runs[len(runs) // 2]
    start = time.perf_counter()
    pathsim_v = pathsim_run(1.0, 0.01, stop=args.stop)
    pathsim_wall = time.perf_counter() - start
    ratio = pathsim_wall / tandem_wall
    print(f"cruise control to {args.stop:g} s, RK4 at 10 ms")
    print(f"  tandem sim, whole process (median of {args.repeat}): {tandem_wall * 1e3:.1f} ms, v = {tandem_v!r}")
    print(f"  PathSim 0.27.1, in process: {pathsim_wall:.2f} s, v = {pathsim_v!r}")
    print(f"  {ratio:.0f}x quicker (goal >= {GOAL:.0f}x: {'met' if ratio >= GOAL else 'NOT met'})")


if __name__ == "__main__":
    main()
