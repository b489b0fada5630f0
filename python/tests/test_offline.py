"""Offline runs from Python against the command line's CSV, closed forms
and its error messages."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import tandem
from conftest import EXAMPLES, ROOT, cli, cli_error, read_csv, same_bits


@pytest.mark.parametrize(
    "example, options",
    [
        ("cruise_control", {}),
        ("bouncing_ball", {}),
        ("abs_slip", {}),
        ("ev_speed_controller", {}),
        ("bouncing_ball", {"solver": "bdf", "stop": 5.0}),
        ("cruise_control", {"solver": "heun", "step": 0.005, "stop": 50.0}),
    ],
)
def test_results_equal_the_command_lines_csv_bit_for_bit(example: str, options: dict, tmp_path: Path) -> None:
    model = EXAMPLES / f"{example}.json"
    out = tmp_path / "cli.csv"
    flags = [x for k, v in options.items() for x in (f"--{k}", str(v))]
    cli("sim", model, "--out", out, *flags)
    header, expected = read_csv(out)
    result = tandem.sim(model, **options)
    assert result.columns == header
    assert same_bits(result.data, expected)


def test_a_diagram_stays_compiled_when_a_parameter_changes() -> None:
    path = EXAMPLES / "cruise_control.json"
    model = tandem.Model(path)
    compiled = r"compiled 11 of 11 blocks in [0-9.]+ ms"
    assert re.fullmatch(compiled, model.evaluation), model.evaluation
    before = model.sim(stop=30)
    # The drag's gain is in the machine code, which is compiled again.
    model.set_parameter("drag.gain", 30.0)
    assert re.fullmatch(compiled + r" \(after drag\.gain changed\)", model.evaluation), model.evaluation
    after = model.sim(stop=30)
    assert not same_bits(after.data, before.data)
    diagram = json.loads(path.read_text())
    next(b for b in diagram["blocks"] if b["id"] == "drag")["params"]["gain"] = 30.0
    assert same_bits(after.data, tandem.sim(diagram, stop=30).data)
    assert tandem.Model("rober").evaluation is None


def test_a_dict_and_a_path_give_the_same_results() -> None:
    path = EXAMPLES / "cruise_control.json"
    from_dict = tandem.sim(json.loads(path.read_text()), stop=30)
    assert same_bits(from_dict.data, tandem.sim(path, stop=30).data)


def test_cruise_control_follows_the_exact_discretisation_of_its_plant() -> None:
    result = tandem.Model(EXAMPLES / "cruise_control.json").sim(stop=200)
    m, b, period = 1500.0, 20.0, 0.02
    kp, ki, kd, v_ref = 1.0, 0.01, 0.01, 25.0
    a = b / m
    # The PID holds F over each period: v(t_k + s) = v_k e^{-a s} + F_k/b (1 - e^{-a s}).
    v_k = total = e_prev = f_k = 0.0
    worst = 0.0
    for t, v, force in zip(result.time, result["v"], result["force"]):
        k = math.floor(t / period + 1e-9)
        since = t - k * period
        if abs(since) < 1e-9:
            if t > 0:
                v_k = v_k * math.exp(-a * period) + f_k / b * (1 - math.exp(-a * period))
            e = v_ref - v_k
            total += e
            f_k = kp * e + ki * total + kd * (e - e_prev)
            e_prev = e
            assert abs(force - f_k) < 1e-6 * max(abs(f_k), 1.0), (t, force, f_k)
        exact = v_k * math.exp(-a * since) + f_k / b * (1 - math.exp(-a * since))
        worst = max(worst, abs(v - exact))
    assert worst < 1e-6


def test_the_model_is_inspected_as_its_file_says() -> None:
    model = tandem.Model(EXAMPLES / "cruise_control.json")
    assert model.name == "Cruise control"
    assert model.inputs == {"pedal": 0.5}
    assert model.outputs == ["v", "v_ref", "force"]
    assert model.units["v"] == "m/s"
    assert model.states == ["vehicle"]
    assert model.sample_times == [{"block": "controller", "period": 0.02, "offset": 0.0}]
    assert model.parameters["speed_map.gain"] == 50.0
    assert model.parameters["controller.kp"] == 1.0
    assert {"id": "controller", "type": "DiscretePID"} in model.blocks
    assert model.settings["solver"] == "rk4" and model.settings["stop"] == 1000.0
    assert tandem.Model("ev").outputs[0] == "vehicle_speed"


def test_a_parameter_set_from_python_equals_the_same_change_in_the_file(tmp_path: Path) -> None:
    document = json.loads((EXAMPLES / "cruise_control.json").read_text())
    for block in document["blocks"]:
        if block["id"] == "controller":
            block["params"]["kp"] = 2.5
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(document))
    out = tmp_path / "changed.csv"
    cli("sim", changed, "--out", out, "--stop", "100")
    model = tandem.Model(EXAMPLES / "cruise_control.json")
    model.set_parameter("controller.kp", 2.5)
    assert same_bits(model.sim(stop=100).data, read_csv(out)[1])
    # A copy keeps the change; the original model file is untouched.
    assert same_bits(model.copy().sim(stop=100).data, read_csv(out)[1])


def test_a_constant_input_equals_the_inports_default_changed_in_the_file(tmp_path: Path) -> None:
    document = json.loads((EXAMPLES / "cruise_control.json").read_text())
    document["blocks"][0]["params"]["default"] = 0.7
    model = tandem.Model(EXAMPLES / "cruise_control.json")
    model.set_input("pedal", 0.7)
    assert same_bits(model.sim(stop=50).data, tandem.sim(document, stop=50).data)
    model.set_input("pedal")
    assert same_bits(model.sim(stop=50).data, tandem.sim(EXAMPLES / "cruise_control.json", stop=50).data)


INTEGRATOR = {
    "blocks": [
        {"id": "u", "type": "Inport", "params": {"default": 0.0}},
        {"id": "x", "type": "Integrator", "params": {"initial": 0.0}},
        {"id": "out", "type": "Output"},
    ],
    "links": [{"from": "u", "to": "x"}, {"from": "x", "to": "out"}],
    "simulation": {"solver": "rk4", "step": 0.01, "stop": 2.0},
}


def test_input_series_are_sampled_at_each_step_and_held_over_it() -> None:
    # u = t sampled at t_k and held: x(t_n) = h^2 n (n - 1) / 2 exactly.
    model = tandem.Model(INTEGRATOR)
    h = 0.01
    model.set_input("u", times=np.array([0.0, 10.0]), values=np.array([0.0, 10.0]))
    result = model.sim()
    n = np.arange(len(result))
    assert np.allclose(result["out"], h * h * n * (n - 1) / 2, rtol=1e-12, atol=1e-15)
    # A breakpoint table, held: 1 until 1 s, then 3.
    model.set_input("u", table=[(0.0, 1.0), (1.0, 3.0)], interpolation="hold")
    x = model.sim()["out"]
    assert x[100] == pytest.approx(1.0, rel=1e-12)
    assert x[200] == pytest.approx(1.0 + 3.0, rel=1e-12)


def test_results_become_a_dataframe() -> None:
    pd = pytest.importorskip("pandas")
    frame = tandem.sim(EXAMPLES / "bouncing_ball.json", stop=1).to_pandas()
    assert isinstance(frame, pd.DataFrame)
    assert frame.index.name == "time" and frame.index[-1] == 1.0
    assert list(frame.columns) == tandem.Model(EXAMPLES / "bouncing_ball.json").outputs


def test_a_model_with_a_syntax_error_raises_model_error_at_its_line_and_column(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "blocks": [\n    {"id": "a", "type": "Gain" "params": {}}\n  ]\n}\n')
    with pytest.raises(tandem.ModelError) as caught:
        tandem.Model(bad)
    assert str(caught.value) == cli_error("sim", bad)
    assert (caught.value.file, caught.value.line, caught.value.column) == (str(bad), 3, 32)


def test_an_unconnected_port_is_named_as_the_command_line_names_it(tmp_path: Path) -> None:
    document = json.loads((EXAMPLES / "cruise_control.json").read_text())
    document["links"] = [link for link in document["links"] if link["from"] != "drag"]
    bad = tmp_path / "unlinked.json"
    bad.write_text(json.dumps(document, indent=2))
    with pytest.raises(tandem.ModelError) as caught:
        tandem.Model(bad)
    assert str(caught.value) == cli_error("sim", bad)
    assert caught.value.block == "net_force" and caught.value.port is not None


def test_bad_options_inputs_and_parameters_raise_typed_errors_naming_them() -> None:
    model = tandem.Model(EXAMPLES / "cruise_control.json")
    with pytest.raises(tandem.ConfigError) as caught:
        model.sim(step=-1)
    assert caught.value.key == "step" and "step" in str(caught.value)
    with pytest.raises(tandem.ConfigError) as caught:
        model.sim(chatter="sometimes")
    assert caught.value.key == "chatter"
    with pytest.raises(tandem.ModelError, match='no input "throttle"; its inputs: pedal'):
        model.set_input("throttle", 1.0)
    with pytest.raises(tandem.ModelError, match=r"times\[1\] = 0 does not come after"):
        model.set_input("pedal", times=[1.0, 0.0], values=[0.0, 1.0])
    with pytest.raises(tandem.ModelError) as caught:
        model.set_parameter("controller.sample_time", 0.05)
    assert caught.value.block == "controller"
    with pytest.raises(tandem.ModelError, match="no built-in model"):
        tandem.Model("no_such_model")
    with pytest.raises(tandem.TandemIOError, match="cannot read the model"):
        tandem.Model("missing/model.json")
    assert issubclass(tandem.RunFault, tandem.TandemError)
    # Every error has the place attributes, None where unknown.
    assert tandem.ConfigError("x").line is None and tandem.RunFault("y").partial is None


def test_a_run_that_fails_raises_run_fault_with_the_rows_before(tmp_path: Path) -> None:
    document = {
        "blocks": [
            {"id": "one", "type": "Constant", "params": {"value": 1.0}},
            {"id": "x", "type": "Integrator", "params": {"initial": 0.0}},
            {"id": "inverse", "type": "Expression", "params": {"expression": "sqrt(1 - u)"}},
            {"id": "y", "type": "Output"},
        ],
        "links": [{"from": "one", "to": "x"}, {"from": "x", "to": "inverse"}, {"from": "inverse", "to": "y"}],
        "simulation": {"solver": "rk4", "step": 0.5, "stop": 5.0},
    }
    path = tmp_path / "blows_up.json"
    path.write_text(json.dumps(document))
    with pytest.raises(tandem.RunFault) as caught:
        tandem.sim(path)
    assert "non-finite value" in str(caught.value)
    assert cli_error("sim", path, "--out", tmp_path / "x.csv").startswith(f"{path} (the rows before")
    assert str(caught.value).split(": ", 1)[1] in cli_error("sim", path, "--out", tmp_path / "x.csv")
    # x = t: sqrt(1 - x) is a number up to 1 s, NaN at 1.5 s.
    assert isinstance(caught.value.partial, tandem.Result)
    assert caught.value.partial.time.tolist() == [0.0, 0.5, 1.0]
    assert caught.value.partial["y"][:2].tolist() == [1.0, math.sqrt(0.5)]
    # The message names the block, and so does the exception.
    assert 'block "inverse"' in str(caught.value) and caught.value.block == "inverse"


def test_the_interpreter_runs_other_threads_while_a_model_simulates() -> None:
    model = tandem.Model(EXAMPLES / "cruise_control.json")
    done = threading.Event()

    def run() -> None:
        try:
            model.sim(step=1e-4, stop=300.0)
        finally:
            done.set()

    worker = threading.Thread(target=run)
    worker.start()
    woke = 0
    while not done.is_set():
        time.sleep(0.005)
        woke += 1
    worker.join()
    # Holding the interpreter for the run would leave this thread asleep
    # throughout (a wake-up or two at most).
    assert woke >= 10, f"the waiting thread woke {woke} times during the simulation"


def test_ctrl_c_stops_a_long_simulation_cleanly(tmp_path: Path) -> None:
    script = f"""
import os, signal, threading, time, tandem
threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
started = time.monotonic()
try:
    tandem.sim({str(EXAMPLES / 'cruise_control.json')!r}, step=1e-5, stop=500.0)
    print("finished")
except KeyboardInterrupt:
    print("interrupted after", round(time.monotonic() - started, 1), "s")
"""
    # Away from the sources, so that the installed package is imported.
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("interrupted after"), done.stdout + done.stderr


def test_numpy_scalars_and_zero_dimensional_arrays_set_parameters_as_the_numbers_they_hold() -> None:
    expected = tandem.Model(EXAMPLES / "cruise_control.json")
    expected.set_parameter("controller.kp", 2.5)
    expected.set_parameter("speed_map.gain", 40)
    want = expected.sim(stop=20).data
    for kp, gain in [(np.float32(2.5), np.int64(40)), (np.array(2.5), np.array(40)), (np.float64(2.5), np.int32(40))]:
        model = tandem.Model(EXAMPLES / "cruise_control.json")
        model.set_parameter("controller.kp", kp)
        model.set_parameter("speed_map.gain", gain)
        assert same_bits(model.sim(stop=20).data, want), (type(kp), type(gain))
        # A copy (as Dask workers get it) takes them again.
        assert same_bits(model.copy().sim(stop=20).data, want)


def test_a_parameter_that_is_not_finite_is_refused_naming_it() -> None:
    model = tandem.Model(EXAMPLES / "cruise_control.json")
    for value, shown in [(float("nan"), "nan"), (np.float64("inf"), "inf"), (np.float32("-inf"), "-inf")]:
        with pytest.raises(tandem.ModelError) as caught:
            model.set_parameter("controller.kp", value)
        assert str(caught.value) == f"controller.kp: {shown} is not a finite number; give a finite value"
        assert (caught.value.block, caught.value.key) == ("controller", "kp")
        assert caught.value.file == str(EXAMPLES / "cruise_control.json")
    with pytest.raises(tandem.ModelError) as caught:
        model.set_parameter("controller.kp", object())
    assert str(caught.value) == (
        "controller.kp: a object is not a number, a string, a boolean or a list of them; "
        "give a value of the model file's form"
    )
    # Nothing was changed.
    assert model.parameters["controller.kp"] == 1.0


def test_more_rows_than_the_memory_available_are_refused_before_the_run() -> None:
    with pytest.raises(tandem.ConfigError) as caught:
        tandem.sim(INTEGRATOR, step=1e-3, stop=1e9, large_output=True)
    message = str(caught.value)
    assert re.fullmatch(
        r"<dict>: stop: 1000000000001 rows of 2 values are 16000\.0 GB in memory, more than the [0-9]+\.[0-9] GB "
        r"this machine has available; shorten the run or lengthen the step, or simulate with the command line "
        r"\(tandem sim\), which writes rows to a file as they come",
        message,
    ), message
    assert caught.value.key == "stop"


def test_results_are_the_native_memory_not_a_copy_of_it() -> None:
    result = tandem.sim(EXAMPLES / "cruise_control.json", stop=10)
    base = result.data
    while isinstance(base, np.ndarray):
        base = base.base
    assert type(base).__name__ == "Doubles" and len(base) == result.data.size
    assert result.data.flags.writeable
    # A column is a view of the table, the table a view of the native doubles.
    assert np.shares_memory(result["v"], result.data)
