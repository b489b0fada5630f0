"""Sweeps: the parameter table, grids as xarray dimensions, small sweeps
here and long ones on Dask (a local cluster, or a client given) against
the same sweep run serially, value for value."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import tandem
from tandem.sweep import table
from conftest import EXAMPLES, same_bits

CRUISE = EXAMPLES / "cruise_control.json"


def test_tables_are_grids_lists_or_seeded_draws() -> None:
    grid = table({"a.x": [1, 2], "b": [10, 20, 30]})
    assert grid["a.x"].tolist() == [1, 1, 1, 2, 2, 2] and grid["b"].tolist() == [10, 20, 30] * 2
    assert table({"a.x": [1, 2], "b": [3, 4]}, "list")["b"].tolist() == [3, 4]
    first, again = table({"k.p": (0, 1)}, "random", samples=5, seed=7), table({"k.p": (0, 1)}, "random", samples=5, seed=7)
    assert same_bits(first["k.p"], again["k.p"]) and np.all((first["k.p"] >= 0) & (first["k.p"] < 1))
    with pytest.raises(ValueError, match="one length"):
        table({"a.x": [1, 2], "b": [3]}, "list")
    with pytest.raises(ValueError, match=r"\(low, high\)"):
        table({"a.x": (2, 1)}, "random", samples=3)


def test_each_run_of_a_sweep_equals_the_same_run_by_hand() -> None:
    result = tandem.sweep(CRUISE, {"controller.kp": [0.5, 2.0], "pedal": [0.4, 0.6]}, serial=True, stop=20)
    assert len(result) == 4 and result["v"].shape == (4, 2001)
    by_hand = tandem.Model(CRUISE)
    by_hand.set_parameter("controller.kp", 2.0)
    by_hand.set_input("pedal", 0.4)
    assert same_bits(result["v"][2], by_hand.sim(stop=20)["v"])
    assert result.parameters["pedal"].tolist() == [0.4, 0.6, 0.4, 0.6]


def test_a_sweep_on_two_dask_workers_equals_the_serial_sweep_value_for_value() -> None:
    pytest.importorskip("dask.distributed")
    parameters = {"controller.kp": (0.5, 2.0), "controller.ki": (0.0, 0.05), "pedal": (0.3, 0.8)}
    options = dict(method="random", samples=12, seed=3, stop=60, progress=False)
    on_dask = tandem.sweep(CRUISE, parameters, workers=2, serial=False, **options)
    serial = tandem.sweep(CRUISE, parameters, serial=True, **options)
    assert same_bits(on_dask.time, serial.time)
    for name in ("v", "v_ref", "force"):
        assert same_bits(on_dask[name], serial[name]), name
    for name in parameters:
        assert same_bits(on_dask.parameters[name], serial.parameters[name])


def test_a_sweep_becomes_an_xarray_dataset_with_the_grids_dimensions() -> None:
    xr = pytest.importorskip("xarray")
    grid = {"controller.kp": [0.5, 2.0], "pedal": [0.4, 0.5, 0.6]}
    result = tandem.sweep(CRUISE, grid, serial=True, stop=5, outputs=["v", "v_ref"])
    dataset = result.to_xarray()
    assert isinstance(dataset, xr.Dataset)
    assert dict(dataset.sizes) == {"controller.kp": 2, "pedal": 3, "time": 501}
    assert dataset["pedal"].values.tolist() == [0.4, 0.5, 0.6]
    assert dataset["v_ref"].sel(pedal=0.6).values[:, -1].tolist() == [30.0, 30.0]
    by_hand = tandem.Model(CRUISE)
    by_hand.set_parameter("controller.kp", 2.0)
    by_hand.set_input("pedal", 0.4)
    assert same_bits(dataset["v"].sel({"controller.kp": 2.0, "pedal": 0.4}).values, by_hand.sim(stop=5)["v"])
    # A table that is no grid keeps (run, time).
    listed = tandem.sweep(CRUISE, {"pedal": [0.4, 0.6]}, method="list", serial=True, stop=5, outputs=["v_ref"])
    dataset = listed.to_xarray()
    assert dict(dataset.sizes) == {"run": 2, "time": 501}
    assert dataset["v_ref"].sel(run=1).values[-1] == 30.0 and dataset["pedal"].values.tolist() == [0.4, 0.6]


def test_an_empty_value_list_is_refused_naming_it() -> None:
    for method in ("grid", "list"):
        with pytest.raises(ValueError) as caught:
            tandem.sweep(CRUISE, {"pedal": [0.4], "controller.kp": []}, method=method, serial=True, stop=1)
        assert str(caught.value) == "'controller.kp': no values to sweep; give at least one"


def test_a_small_sweep_runs_here_and_a_long_one_on_dask(monkeypatch: pytest.MonkeyPatch) -> None:
    sweep = sys.modules["tandem.sweep"]
    sent = []

    def on_dask(model, rows, options, outputs, client, scheduler, workers, progress):
        sent.append(len(rows))
        return [sweep.run_one(model, row, options, outputs) for row in rows]

    monkeypatch.setattr(sweep, "_on_dask", on_dask)
    parameters = {"pedal": [0.3, 0.4, 0.5, 0.6]}
    small = tandem.sweep(CRUISE, parameters, stop=5, progress=False)
    assert sent == []
    # As if each run took longer than the bound allows for four: the
    # first is made here, the other three go to Dask.
    monkeypatch.setattr(sweep, "SERIAL_BELOW", 0.0)
    long = tandem.sweep(CRUISE, parameters, stop=5, progress=False)
    assert sent == [3]
    assert same_bits(small["v"], long["v"])
    tandem.sweep(CRUISE, parameters, stop=5, progress=False, serial=True)
    assert sent == [3]


def test_a_sweep_runs_on_a_dask_client_given_and_leaves_it_open() -> None:
    distributed = pytest.importorskip("dask.distributed")
    parameters = {"controller.kp": [0.5, 1.0, 2.0]}
    serial = tandem.sweep(CRUISE, parameters, serial=True, stop=20, progress=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            on_client = tandem.sweep(CRUISE, parameters, client=client, stop=20, progress=False)
            assert client.status == "running"
            assert sum(client.run(lambda: 1).values()) == 1
    for name in ("v", "v_ref", "force"):
        assert same_bits(on_client[name], serial[name]), name
