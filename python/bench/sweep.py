"""A 200-run sweep of the cruise control on a local Dask cluster of two
single-threaded workers against one, and against the same sweep written
with PathSim in a Python loop; and a small sweep (16 runs) as
``tandem.sweep`` runs it by default against a local cluster.

    python python/bench/sweep.py [--runs N] [--pathsim-runs M]

Goals: 2 workers at least 1.8 times quicker than 1; the small sweep no
slower than a loop (printed, not asserted). PathSim is timed on M runs and scaled to N (it takes seconds a
run); its model is the same diagram built from PathSim's blocks, the
discrete PID as its transfer function."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import tandem
from tandem.sweep import SERIAL_BELOW

ROOT = Path(__file__).resolve().parents[2]
CRUISE = ROOT / "models" / "examples" / "cruise_control.json"
STOP = 200.0


def sweep_table(runs: int) -> dict:
    return {"controller.kp": (0.5, 2.0), "controller.ki": (0.0, 0.05)}, dict(method="random", samples=runs, seed=1)


def timed(run) -> "tuple[float, object]":
    start = time.perf_counter()
    result = run()
    return time.perf_counter() - start, result


def on_cluster(workers: int, parameters: dict, options: dict) -> "tuple[float, object]":
    """The sweep on a local cluster of `workers` started (and warmed up)
    beforehand: the time of the sweep alone."""
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            client.run(lambda: __import__("tandem"))
        return timed(lambda: tandem.sweep(CRUISE, parameters, scheduler=cluster.scheduler_address, **options))


def pathsim_run(kp: float, ki: float, kd: float = 0.01, stop: float = STOP) -> float:
    """The cruise control in PathSim to `stop`, RK4 at 10 ms; the final v."""
    from pathsim import Connection, Simulation
    from pathsim.blocks import Adder, Amplifier, Constant, Integrator, Scope
    from pathsim.blocks.discrete import DiscreteTransferFunction
    from pathsim.solvers import RK4

    pedal, speed_map = Constant(0.5), Amplifier(50.0)
    error, net_force = Adder("+-"), Adder("+-")
    # F(z)/E(z) = kp + ki z/(z-1) + kd (z-1)/z, sampled every 20 ms.
    pid = DiscreteTransferFunction(Num=[kp + ki + kd, -kp - 2 * kd, kd], Den=[1.0, -1.0, 0.0], T=0.02)
    drag, inverse_mass, vehicle, scope = Amplifier(20.0), Amplifier(1 / 1500), Integrator(0.0), Scope()
    blocks = [pedal, speed_map, error, pid, net_force, drag, inverse_mass, vehicle, scope]
    connections = [
        Connection(pedal, speed_map),
        Connection(speed_map, error[0]),
        Connection(vehicle, error[1], drag, scope),
        Connection(error, pid),
        Connection(pid, net_force[0]),
        Connection(drag, net_force[1]),
        Connection(net_force, inverse_mass),
        Connection(inverse_mass, vehicle),
    ]
    sim = Simulation(blocks, connections, dt=0.01, Solver=RK4, log=False)
    sim.run(stop)
    return float(scope.read()[1][0][-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--pathsim-runs", type=int, default=3)
    args = parser.parse_args()
    parameters, how = sweep_table(args.runs)
    options = dict(stop=STOP, outputs=["v"], progress=False, **how)
    serial, reference = timed(lambda: tandem.sweep(CRUISE, parameters, serial=True, **options))
    one, on_one = on_cluster(1, parameters, options)
    two, on_two = on_cluster(2, parameters, options)
    assert np.array_equal(on_one["v"], reference["v"]) and np.array_equal(on_two["v"], reference["v"])
    kp, ki = reference.parameters["controller.kp"], reference.parameters["controller.ki"]
    m = min(args.pathsim_runs, args.runs)
    start = time.perf_counter()
    finals = [pathsim_run(kp[i], ki[i]) for i in range(m)]
    pathsim = (time.perf_counter() - start) / m * args.runs
    print(f"cruise control, {args.runs} runs to {STOP:g} s ({len(reference.time)} rows each), kp and ki drawn")
    print(f"  serial in this process:   {serial:8.2f} s")
    print(f"  Dask, 1 worker:           {one:8.2f} s   (cluster started beforehand)")
    print(f"  Dask, 2 workers:          {two:8.2f} s   {one / two:5.2f}x of 1 worker (goal >= 1.8x)")
    print(f"  PathSim in a loop:        {pathsim:8.2f} s   (timed on {m} runs, scaled) {pathsim / two:7.1f}x the 2-worker sweep")
    worst = max(abs(f - reference["v"][i][-1]) for i, f in enumerate(finals))
    print(f"  final v, PathSim against Tandem over those runs: largest difference {worst:.2e} m/s")
    small_parameters, small_how = sweep_table(16)
    small = dict(stop=STOP, outputs=["v"], progress=False, **small_how)
    by_default, _ = timed(lambda: tandem.sweep(CRUISE, small_parameters, **small))
    looped, _ = timed(lambda: tandem.sweep(CRUISE, small_parameters, serial=True, **small))
    on_cluster_small, _ = timed(lambda: tandem.sweep(CRUISE, small_parameters, serial=False, workers=2, **small))
    print("cruise control, 16 runs:")
    print(f"  by default:               {by_default:8.2f} s   (runs here when they would take under {SERIAL_BELOW:g} s)")
    print(f"  serial=True:              {looped:8.2f} s")
    print(f"  a local cluster of 2:     {on_cluster_small:8.2f} s   (started for the sweep)")


if __name__ == "__main__":
    main()
