"""An FMU from Python: the variables it records (``signals``), its start
values (``start_values``) and its inputs over time, against the closed form
and against ``tandem sim`` on the same FMU, bit for bit. The FMU is the
project's own test FMU ``first_order`` (``x' = (u - x) / tau``, its local
``der(x)``), built here with the C compiler."""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest

import tandem
from conftest import ROOT, cli, read_csv, same_bits

SOURCES = ROOT / "fmi" / "tests" / "fmus"


@pytest.fixture(scope="module")
def first_order(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``first_order.fmu``, compiled for this machine (Linux, x86-64)."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc) to build the test FMU")
    out = tmp_path_factory.mktemp("fmu")
    library = out / "first_order.so"
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-O2", "-std=c99", "-I", str(SOURCES / "common"), "-o", str(library)]
        + [str(c) for c in sorted((SOURCES / "first_order").glob("*.c"))]
        + ["-lm"],
        check=True,
    )
    fmu = out / "first_order.fmu"
    with zipfile.ZipFile(fmu, "w") as archive:
        archive.write(SOURCES / "first_order" / "modelDescription.xml", "modelDescription.xml")
        archive.write(library, "binaries/linux64/first_order.so")
    return fmu


def test_an_fmus_signals_start_values_and_inputs_match_the_closed_form_and_tandem_sim(
    first_order: Path, tmp_path: Path
) -> None:
    model = tandem.Model(first_order, signals=["x", "der(x)"], start_values={"tau": 0.25, "x0": 2})
    assert model.outputs == ["x", "der(x)"]
    result = model.sim(solver="rk4", step=0.01, stop=1.0)
    x = 1.0 + np.exp(-result.time / 0.25)
    # RK4 at h = tau / 25: a global error of order 1e-8.
    assert np.max(np.abs(result["x"] - x)) < 1e-7
    assert np.max(np.abs(result["der(x)"] - (1.0 - x) / 0.25)) < 1e-6
    out = tmp_path / "lag.csv"
    cli("sim", first_order, "--signals", "x,der(x)", "--set", "tau=0.25", "--set", "x0=2",
        "--solver", "rk4", "--step", "0.01", "--stop", "1", "--out", out)
    header, data = read_csv(out)
    assert header == result.columns
    assert same_bits(result.data, data)
    # The input over time, as --input feeds it.
    model.set_input("u", times=[0.0, 0.5], values=[1.0, 3.0])
    fed = model.sim(solver="rk4", step=0.01, stop=1.0)
    inputs = tmp_path / "u.csv"
    inputs.write_text("time,u\n0,1\n0.5,3\n")
    cli("sim", first_order, "--signals", "x,der(x)", "--set", "tau=0.25", "--set", "x0=2", "--input", inputs,
        "--solver", "rk4", "--step", "0.01", "--stop", "1", "--out", out)
    header, data = read_csv(out)
    assert same_bits(fed.data, data)
    assert fed["x"][-1] > result["x"][-1] + 0.5


def test_what_an_fmu_does_not_have_and_a_diagram_does_not_take_is_refused(first_order: Path) -> None:
    with pytest.raises(tandem.ModelError, match='no numeric variable is called or matches "dx"'):
        tandem.Model(first_order, signals=["dx"])
    with pytest.raises(tandem.ModelError, match='has no variable "tau_"'):
        tandem.Model(first_order, start_values={"tau_": 1.0})
    with pytest.raises(tandem.ModelError, match="signals and start_values apply to FMU models only"):
        tandem.Model(str(ROOT / "models" / "examples" / "cruise_control.json"), signals=["speed"])
