"""Parameter campaigns: offline runs of one model over a table of
parameter and input values, here in this process when the sweep is small,
else as Dask tasks (a local cluster, a scheduler's address or a client
given), gathered in table order so that the same sweep gives the same
arrays serially, on one worker or many."""

from __future__ import annotations

import itertools
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ._model import Model, ModelSource, Result

#: Tasks per worker thread a sweep on Dask is cut into.
TASKS_PER_THREAD = 4

#: A sweep whose runs would take less than this many seconds one after the
#: other (the first run's time times their number) runs here: starting a
#: local cluster takes seconds, and two workers at best halve the rest.
SERIAL_BELOW = 6.0


class SweepResult:
    """A sweep's results: the parameter table (one row per run), the common
    time axis and, per output, an array of runs x rows; for a grid, its
    axes."""

    def __init__(
        self,
        table: Dict[str, np.ndarray],
        time: np.ndarray,
        outputs: Dict[str, np.ndarray],
        grid: Optional[Dict[str, np.ndarray]] = None,
    ):
        #: Each swept name's value in each run.
        self.parameters: Dict[str, np.ndarray] = table
        #: The time of each row (s).
        self.time: np.ndarray = time
        #: Each output: runs x rows.
        self.outputs: Dict[str, np.ndarray] = outputs
        #: A grid sweep's axes: each name's values, the runs being every
        #: combination, the last name varying fastest (None otherwise).
        self.grid: Optional[Dict[str, np.ndarray]] = grid

    def __getitem__(self, name: str) -> np.ndarray:
        return self.outputs[name]

    def __len__(self) -> int:
        return len(next(iter(self.parameters.values()))) if self.parameters else 0

    def __repr__(self) -> str:
        return f"<tandem.SweepResult {len(self)} runs x {len(self.time)} rows: {', '.join(self.outputs)}>"

    def to_xarray(self) -> Any:
        """An xarray Dataset (needs xarray): for a grid, with one dimension
        per swept name (its values as coordinates) and time; otherwise with
        dimensions (run, time), the parameters as coordinates along run."""
        import xarray as xr

        coords: Dict[str, Any] = {"time": self.time}
        if self.grid is not None:
            dims = (*self.grid, "time")
            shape = (*(len(values) for values in self.grid.values()), len(self.time))
            coords.update(self.grid)
            variables = {name: (dims, values.reshape(shape)) for name, values in self.outputs.items()}
            return xr.Dataset(variables, coords=coords)
        coords.update({name: ("run", values) for name, values in self.parameters.items()})
        return xr.Dataset({name: (("run", "time"), values) for name, values in self.outputs.items()}, coords=coords)


def table(
    parameters: Mapping[str, Any],
    method: str = "grid",
    samples: Optional[int] = None,
    seed: int = 0,
) -> Dict[str, np.ndarray]:
    """The runs of a sweep, one value per name and run.

    ``"grid"``: every combination of the listed values; ``"list"``: the
    lists taken side by side (equal lengths); ``"random"``: ``samples``
    draws, uniform in each ``(low, high)``, from a generator seeded by
    ``seed`` (the same table every time)."""
    names = list(parameters)
    if not names:
        raise ValueError("a sweep needs at least one parameter or input")
    empty = [n for n in names if np.size(parameters[n]) == 0]
    if empty:
        raise ValueError(f"{empty[0]!r}: no values to sweep; give at least one")
    if method == "grid":
        rows = list(itertools.product(*(np.atleast_1d(parameters[n]).tolist() for n in names)))
        return {n: np.array([r[i] for r in rows], dtype=float) for i, n in enumerate(names)}
    if method == "list":
        lengths = {n: len(np.atleast_1d(parameters[n])) for n in names}
        if len(set(lengths.values())) != 1:
            raise ValueError(f"method='list' takes lists of one length: {lengths}")
        return {n: np.atleast_1d(np.asarray(parameters[n], dtype=float)) for n in names}
    if method == "random":
        if not samples or samples < 1:
            raise ValueError("method='random' needs samples=N (N >= 1)")
        generator = np.random.default_rng(seed)
        ranges: Dict[str, Tuple[float, float]] = {}
        for n in names:
            bounds = np.asarray(parameters[n], dtype=float)
            if bounds.shape != (2,) or not bounds[0] <= bounds[1]:
                raise ValueError(f"{n!r}: method='random' takes (low, high), not {parameters[n]!r}")
            ranges[n] = (float(bounds[0]), float(bounds[1]))
        return {n: generator.uniform(lo, hi, samples) for n, (lo, hi) in ranges.items()}
    raise ValueError(f"method {method!r}: use 'grid', 'list' or 'random'")


def run_one(
    model: Model, values: Mapping[str, float], options: Mapping[str, Any], outputs: Optional[Sequence[str]] = None
) -> Result:
    """One run of a sweep: ``values`` set on a copy of ``model`` (a name
    with a dot is a parameter ``block.param``, one without an input),
    simulated with ``options``; only ``outputs`` kept when given (less to
    send back from a worker)."""
    run = model.copy()
    for name, value in values.items():
        if "." in name:
            run.set_parameter(name, value)
        else:
            run.set_input(name, value)
    result = run.sim(**options)
    if outputs is None:
        return result
    kept = ["time", *outputs]
    return Result(kept, result.data[:, [result.columns.index(c) for c in kept]].copy(), result.summary)


def run_many(
    model: Model, rows: Sequence[Mapping[str, float]], options: Mapping[str, Any], outputs: Optional[Sequence[str]]
) -> List[Result]:
    """Several runs of a sweep, in order (one Dask task)."""
    return [run_one(model, row, options, outputs) for row in rows]


def _gather(results: Sequence[Result], names: Optional[Sequence[str]]) -> Tuple[np.ndarray, Dict[str, np.ndarray]]:
    first = results[0]
    wanted = list(names) if names is not None else first.names
    for i, r in enumerate(results):
        if len(r) != len(first):
            raise ValueError(f"run {i} has {len(r)} rows, run 0 {len(first)}: sweep no step or stop time")
    return first.time.copy(), {n: np.stack([r[n] for r in results]) for n in wanted}


def sweep(
    model: ModelSource,
    parameters: Mapping[str, Any],
    *,
    method: str = "grid",
    samples: Optional[int] = None,
    seed: int = 0,
    outputs: Optional[Sequence[str]] = None,
    client: Any = None,
    scheduler: Optional[str] = None,
    workers: int = 2,
    serial: Optional[bool] = None,
    progress: bool = True,
    **options: Any,
) -> SweepResult:
    """Runs ``model`` once per row of :func:`table` (``parameters``,
    ``method``, ``samples``, ``seed``) with ``tandem sim``'s ``options``.

    Where the runs go: with a ``dask.distributed.Client`` as ``client`` (left
    open), or a scheduler's address as ``scheduler``, they are Dask tasks
    there. Otherwise the first run is made here, and when all of them would
    take less than :data:`SERIAL_BELOW` seconds so (or ``serial=True``) the
    rest follow here in order; else (or ``serial=False``) they are tasks on
    a local cluster of ``workers`` single-threaded worker processes started
    for the sweep. A progress bar shows on long sweeps (``progress``).
    Results come back in table order: the same sweep gives the same arrays
    serially, on one worker or many.
    """
    model = model if isinstance(model, Model) else Model(model)
    runs = table(parameters, method, samples, seed)
    count = len(next(iter(runs.values())))
    rows: List[Dict[str, float]] = [{n: float(v[i]) for n, v in runs.items()} for i in range(count)]
    unknown = [o for o in outputs or [] if o not in model.outputs]
    if unknown:
        raise KeyError(f"no output {', '.join(map(repr, unknown))}; outputs: {', '.join(model.outputs)}")
    bar = progress and count > 1
    if client is not None or scheduler is not None:
        results = _on_dask(model, rows, options, outputs, client, scheduler, workers, bar)
    elif serial is False:
        results = _on_dask(model, rows, options, outputs, None, None, workers, bar)
    else:
        started = time.perf_counter()
        first = run_one(model, rows[0], options, outputs)
        took = time.perf_counter() - started
        rest = rows[1:]
        if serial or took * count < SERIAL_BELOW or not rest:
            results = [first, *(run_one(model, row, options, outputs) for row in _progress(rest, bar))]
        else:
            results = [first, *_on_dask(model, rest, options, outputs, None, None, workers, bar)]
    time_axis, gathered = _gather(results, outputs)
    grid = {n: np.atleast_1d(np.asarray(parameters[n], dtype=float)) for n in runs} if method == "grid" else None
    return SweepResult(runs, time_axis, gathered, grid)


def _progress(items: Any, show: bool, total: Optional[int] = None) -> Any:
    """``items`` with a progress bar when asked and tqdm is installed (with
    ``items`` None: the bar, to update by hand, or None)."""
    if not show:
        return items
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return items
    return tqdm(items, desc="sweep", unit="run", total=total)


def _on_dask(
    model: Model,
    rows: List[Dict[str, float]],
    options: Mapping[str, Any],
    outputs: Optional[Sequence[str]],
    client: Any,
    scheduler: Optional[str],
    workers: int,
    progress: bool,
) -> List[Result]:
    """The runs of ``rows`` as Dask tasks: on ``client`` (left open), on a
    client of ``scheduler``, or on a local cluster of ``workers``."""
    from dask.distributed import Client, LocalCluster, as_completed

    cluster = None
    own = client is None
    if own and scheduler is None:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
    elif own:
        client = Client(scheduler)
    try:
        # A few tasks per worker thread, each of several runs: enough to
        # balance the load, few enough that Dask's cost per task is small
        # against the runs.
        threads = max(1, sum(client.nthreads().values()))
        size = max(1, -(-len(rows) // (threads * TASKS_PER_THREAD)))
        chunks = [rows[i : i + size] for i in range(0, len(rows), size)]
        shared = client.scatter(model, broadcast=True)
        futures = [client.submit(run_many, shared, chunk, dict(options), outputs, pure=False) for chunk in chunks]
        runs_of = {future.key: len(chunk) for future, chunk in zip(futures, chunks)}
        bar = _progress(None, progress, len(rows))
        for future in as_completed(futures):
            if bar is not None:
                bar.update(runs_of[future.key])
        if bar is not None:
            bar.close()
        return [result for chunk in client.gather(futures) for result in chunk]
    finally:
        if own:
            client.close()
        if cluster is not None:
            cluster.close()
