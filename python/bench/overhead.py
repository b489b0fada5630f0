"""The cost of one offline run from Python against spawning the command
line for it: a 10-block model (the cruise control without its v_ref
output) run for 10 steps, so that the run itself costs next to nothing.

    python python/bench/overhead.py [--calls N]

Goal: a tandem.sim() call at least 20 times quicker than spawning
`tandem sim` (printed, not asserted)."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import tandem

ROOT = Path(__file__).resolve().parents[2]


def ten_blocks() -> dict:
    model = json.loads((ROOT / "models" / "examples" / "cruise_control.json").read_text())
    model["blocks"] = [b for b in model["blocks"] if b["id"] != "v_ref"]
    for link in model["links"]:
        if isinstance(link["to"], list):
            link["to"] = [t for t in link["to"] if t != "v_ref"]
    assert len(model["blocks"]) == 10
    return model


def median_seconds(run, calls: int) -> float:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    calls = parser.parse_args().calls
    cli = Path(os.environ.get("TANDEM_BIN", ROOT / "target" / "release" / "tandem"))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ten_blocks.json"
        path.write_text(json.dumps(ten_blocks()))
        out = Path(folder) / "out.csv"
        loaded = tandem.Model(path)
        spawn = median_seconds(
            lambda: subprocess.run([cli, "sim", path, "--stop", "0.1", "--out", out], check=True, capture_output=True),
            max(20, calls // 10),
        )
        call = median_seconds(lambda: tandem.sim(path, stop=0.1), calls)
        again = median_seconds(lambda: loaded.sim(stop=0.1), calls)
    print(f"10-block model, 10 steps; median of {calls} calls")
    print(f"  spawning `tandem sim`:              {spawn * 1e3:8.3f} ms")
    print(f"  tandem.sim(path) (load + compile):  {call * 1e3:8.3f} ms   {spawn / call:6.1f}x quicker (goal >= 20x)")
    print(f"  model.sim() on a loaded model:      {again * 1e3:8.3f} ms   {spawn / again:6.1f}x quicker")


if __name__ == "__main__":
    main()
