"""Sweeps: the parameter table, and a sweep on a 2-worker local Dask
cluster against the same sweep run serially, value for value."""

from __future__ import annotations

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
    on_dask = tandem.sweep(CRUISE, parameters, workers=2, **options)
    serial = tandem.sweep(CRUISE, parameters, serial=True, **options)
    assert same_bits(on_dask.time, serial.time)
    for name in ("v", "v_ref", "force"):
        assert same_bits(on_dask[name], serial[name]), name
    for name in parameters:
        assert same_bits(on_dask.parameters[name], serial.parameters[name])


def test_a_sweep_becomes_an_xarray_dataset() -> None:
    xr = pytest.importorskip("xarray")
    result = tandem.sweep(CRUISE, {"pedal": [0.4, 0.6]}, serial=True, stop=5, outputs=["v_ref"])
    dataset = result.to_xarray()
    assert isinstance(dataset, xr.Dataset) and dict(dataset.sizes) == {"run": 2, "time": 501}
    assert dataset["v_ref"].sel(run=1).values[-1] == 30.0 and dataset["pedal"].values.tolist() == [0.4, 0.6]
