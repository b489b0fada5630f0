"""The memory an offline run's results take in Python: the cruise control
to 1000 s at a 0.1 ms step, 10 000 001 rows of 4 doubles (320 MB), its peak
resident memory against the result's size.

    python python/bench/memory.py

Goal: the peak no more than the result and the interpreter (the rows are
handed to numpy without a copy); printed, not asserted."""

from __future__ import annotations

import resource
import time
from pathlib import Path

import tandem

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    started = time.perf_counter()
    result = tandem.sim(ROOT / "models" / "examples" / "cruise_control.json", step=1e-4, stop=1000.0)
    took = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"result: {len(result)} rows x {len(result.columns)} columns = {result.data.nbytes / 1e6:.0f} MB in {took:.1f} s")
    print(f"peak resident memory: {peak / 1e6:.0f} MB (the interpreter with numpy and tandem: {before / 1e6:.0f} MB)")
    print(f"  above the interpreter: {(peak - before) / result.data.nbytes:.2f} x the result (goal: 1.0)")


if __name__ == "__main__":
    main()
