"""Parameter campaigns: offline runs of one model over a table of
parameter and input values, as Dask tasks (a local cluster by default, or
any scheduler), gathered in table order so that the same sweep gives the
same arrays on one worker or many."""

from __future__ import annotations

import itertools
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ._model import Model, ModelSource, Result

#: Tasks per worker thread a sweep on Dask is cut into.
TASKS_PER_THREAD = 4


class SweepResult:
    """A sweep's results: the parameter table (one row per run), the common
    time axis and, per output, an array of runs x rows."""

    def __init__(self, table: Dict[str, np.ndarray], time: np.ndarray, outputs: Dict[str, np.ndarray]):
        #: Each swept name's value in each run.
        self.parameters: Dict[str, np.ndarray] = table
        #: The time of each row (s).
        self.time: np.ndarray = time
        #: Each output: runs x rows.
        self.outputs: Dict[str, np.ndarray] = outputs

    def __getitem__(self, name: str) -> np.ndarray:
        return self.outputs[name]

    def __len__(self) -> int:
        return len(next(iter(self.parameters.values()))) if self.parameters else 0

    def __repr__(self) -> str:
        return f"<tandem.SweepResult {len(self)} runs x {len(self.time)} rows: {', '.join(self.outputs)}>"

    def to_xarray(self) -> Any:
        """An xarray Dataset with dimensions (run, time), the parameters as
        coordinates along run (needs xarray)."""
        import xarray as xr

        coords: Dict[str, Any] = {"time": self.time}
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
    scheduler: Optional[str] = None,
    workers: int = 2,
    serial: bool = False,
    progress: bool = True,
    **options: Any,
) -> SweepResult:
    """Runs ``model`` once per row of :func:`table` (``parameters``,
    ``method``, ``samples``, ``seed``) with ``tandem sim``'s ``options``.

    The runs are Dask tasks: on the scheduler at address ``scheduler`` when
    given, else on a local cluster of ``workers`` single-threaded worker
    processes started for the sweep; ``serial=True`` runs them here in
    order instead. A progress bar shows on long sweeps (``progress``).
    Results come back in table order: the same sweep gives the same arrays
    on one worker or many.
    """
    model = model if isinstance(model, Model) else Model(model)
    runs = table(parameters, method, samples, seed)
    count = len(next(iter(runs.values())))
    rows: List[Dict[str, float]] = [{n: float(v[i]) for n, v in runs.items()} for i in range(count)]
    unknown = [o for o in outputs or [] if o not in model.outputs]
    if unknown:
        raise KeyError(f"no output {', '.join(map(repr, unknown))}; outputs: {', '.join(model.outputs)}")
    if serial:
        results = [run_one(model, row, options, outputs) for row in _progress(rows, progress and count > 1)]
    else:
        results = _on_dask(model, rows, options, outputs, scheduler, workers, progress and count > 1)
    time, gathered = _gather(results, outputs)
    return SweepResult(runs, time, gathered)


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
    scheduler: Optional[str],
    workers: int,
    progress: bool,
) -> List[Result]:
    from dask.distributed import Client, LocalCluster, as_completed

    cluster = None
    if scheduler is None:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
    else:
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
        client.close()
        if cluster is not None:
            cluster.close()
