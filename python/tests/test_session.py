"""Real-time sessions from Python: the virtual clock against `tandem run
--virtual-clock`, reads, writes and waits, lock-step determinism, errors,
and a short run on the real clock."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tandem
from tandem._session import NoRowYet
from conftest import ROOT, cli, cli_error, read_csv, same_bits

CRUISE = ROOT / "config" / "examples" / "cruise.toml"
HIL = ROOT / "python" / "examples" / "hil"


def test_a_session_on_the_virtual_clock_equals_tandem_run_virtual_clock(tmp_path: Path) -> None:
    cli("run", CRUISE, "--virtual-clock", "--duration", "80", "--results", tmp_path / "cli")
    header, expected = read_csv(tmp_path / "cli" / "cruise-run.csv")
    with tandem.Session(CRUISE, duration=80, results=tmp_path / "py") as session:
        session.run_for(80)
        assert session.ended and session.time == pytest.approx(80)
        recording = session.recording()
    assert recording.columns == header
    assert same_bits(recording.data, expected)
    # The pedal steps from 0.5 to 0.7 at 60 s: v_ref = 50 x.
    assert set(recording["v_ref"][recording.time < 60]) == {25.0}
    assert recording["v_ref"][-1] == 35.0
    assert (tmp_path / "py" / "cruise-run.csv").read_bytes() == (tmp_path / "cli" / "cruise-run.csv").read_bytes()


def test_inputs_and_parameters_change_from_the_next_frame_and_waits_see_them(tmp_path: Path) -> None:
    with tandem.Session(CRUISE, results=tmp_path) as session:
        assert session.inputs == ["pedal"] and session.outputs == ["v", "v_ref", "force"]
        session.run_for(1)
        assert session["v_ref"] == 25.0
        frame = session.set_input("pedal", 0.6)
        took = session.wait_until(lambda s: s["v_ref"] == 30.0, timeout=1, what="v_ref = 30")
        # Recorded every 10th frame of 10 ms: seen within 0.1 s of the change.
        assert frame == pytest.approx(1 / 0.01, abs=1) and took <= 0.1 + 1e-9
        session.set_parameter("speed_map.gain", 40.0)
        session.wait_until(lambda s: s["v_ref"] == 24.0, timeout=1)
        with pytest.raises(tandem.WaitTimeout, match=r"v above 100 did not hold within 2 s") as caught:
            session.wait_until(lambda s: s["v"] > 100, timeout=2, what="v above 100")
        assert isinstance(caught.value, TimeoutError) and isinstance(caught.value, tandem.TandemError)
        with pytest.raises(KeyError, match="not recorded"):
            session["speed_map"]
        with pytest.raises(tandem.ModelError, match="throttle"):
            session["throttle"] = 1.0
        stats = session.stats()
        assert stats["frames"] == round(session.time / 0.01) and stats["missed"] == 0
    assert session.report["frames"] == stats["frames"]


def test_a_session_that_reaches_its_end_ends_waits_with_run_fault(tmp_path: Path) -> None:
    with tandem.Session(CRUISE, duration=0.5, results=tmp_path) as session:
        with pytest.raises(tandem.RunFault, match="the run ended at t = 0.5 s"):
            session.wait_until(lambda s: s["v"] > 100, timeout=10)


def test_a_configuration_as_a_dict(tmp_path: Path) -> None:
    config = {
        "model": str(ROOT / "models" / "examples" / "cruise_control.json"),
        "frame": "10ms",
        "duration": "5s",
        "record": {"file": "dict.csv", "signals": ["v"]},
    }
    with tandem.Session(config, results=tmp_path) as session:
        session.run_for(5)
        assert session.ended
    assert len(session.recording() if False else read_csv(tmp_path / "dict.csv")[1]) == 500


def test_a_bad_configuration_raises_config_error_with_the_command_lines_message(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    text = CRUISE.read_text().replace('frame = "10ms"', 'frame = "10 parsecs"')
    bad.write_text(text.replace("../../models", str(ROOT / "models")))
    with pytest.raises(tandem.ConfigError) as caught:
        tandem.Session(bad, results=tmp_path)
    assert str(caught.value) == cli_error("run", bad, "--virtual-clock", "--results", tmp_path)
    line = next(i for i, l in enumerate(bad.read_text().splitlines(), 1) if l.startswith("frame"))
    assert (caught.value.file, caught.value.line, caught.value.key) == (str(bad), line, "frame")
    with pytest.raises(tandem.ConfigError, match="clock"):
        tandem.Session(CRUISE, clock="sundial")
    for duration in ("-1", "0.001"):
        with pytest.raises(tandem.ConfigError) as caught:
            tandem.Session(CRUISE, duration=float(duration))
        cli_says = cli_error("run", CRUISE, "--virtual-clock", "--duration", duration)
        assert caught.value.key == "duration" and "--" + str(caught.value) == cli_says


def test_a_bus_node_on_the_virtual_clock_needs_an_in_process_bus(tmp_path: Path) -> None:
    with tandem.Session(ROOT / "config" / "examples" / "ev-can.toml", results=tmp_path, duration=0.1) as session:
        assert session.buses == ["can0"]
        with pytest.raises(tandem.ConfigError, match='transport = "virtual"'):
            session.bus("can0")
        with pytest.raises(tandem.ConfigError, match='no bus "can1"; its buses: can0'):
            session.bus("can1")


def closed_loop(results: Path) -> np.ndarray:
    """The plant and the ECU of the example HIL tests for 8 s on the
    virtual clock, the set-point stepped to 12 m/s at 1 s."""
    with tandem.Session(HIL / "plant.toml", results=results) as plant, tandem.Session(
        HIL / "ecu.toml", results=results
    ) as ecu:
        plant.run_for(1)
        ecu["speed_setpoint"] = 12
        plant.run_for(7)
        return plant.recording().data


def test_plant_and_ecu_on_the_virtual_clock_give_the_same_rows_every_time(tmp_path: Path) -> None:
    first, second = closed_loop(tmp_path / "a"), closed_loop(tmp_path / "b")
    assert len(first) == 8000
    assert same_bits(first, second)
    # Still overshooting after 7 s (the controller winds up at its torque limit).
    assert 12 < first[-1, 1] < 16


def test_a_session_on_the_real_clock_runs_and_stops(tmp_path: Path) -> None:
    with tandem.Session(CRUISE, clock="real", duration=30, results=tmp_path) as session:
        session.wait_until(lambda s: s.values().get("v", 0) > 0.5, timeout=10)
        assert not session.ended and session.clock == "real"
        session.set_input("pedal", 0.6)
        session.wait_until(lambda s: s["v_ref"] == 30.0, timeout=2)
    report = session.report
    assert report["clock"] == "real" and 0 < report["frames"] < 3000
    assert report["failure"] is None


def test_a_wait_before_the_first_row_waits_for_it(tmp_path: Path) -> None:
    # On the real clock the first row comes a frame or more after the
    # start: an output read before it is "not yet".
    with tandem.Session(CRUISE, clock="real", duration=5, results=tmp_path / "real") as session:
        assert session.wait_until(lambda s: s["v_ref"] == 25.0, timeout=2) < 2
    # The same made certain: a condition that finds no row at its first
    # three looks.
    looks = []

    def condition(s: tandem.Session) -> bool:
        looks.append(s.time)
        if len(looks) <= 3:
            raise NoRowYet(f"'v': no row recorded yet (t = {s.time:g} s); step or wait first")
        return True

    with tandem.Session(CRUISE, results=tmp_path / "virtual") as session:
        assert session.wait_until(condition, timeout=1) == pytest.approx(0.03)
        assert len(looks) == 4
        # A name that is not recorded still is an error.
        with pytest.raises(KeyError, match="not recorded"):
            session.wait_until(lambda s: s["pedal"] > 0, timeout=1)


def test_calls_after_stop_raise_naming_the_call(tmp_path: Path) -> None:
    session = tandem.Session(CRUISE, results=tmp_path)
    session.run_for(1)
    session.stop()
    for call, do in [
        ("set_input", lambda: session.set_input("pedal", 0.6)),
        ("set_input", lambda: session.__setitem__("pedal", 0.6)),
        ("run_for", lambda: session.run_for(1)),
        ("step", lambda: session.step()),
        ("wait_until", lambda: session.wait_until(lambda s: True, timeout=1)),
        ("set_parameter", lambda: session.set_parameter("speed_map.gain", 40)),
        ("bus", lambda: session.bus("can0")),
    ]:
        with pytest.raises(tandem.SessionStopped) as caught:
            do()
        assert str(caught.value) == f"{call}: the session was stopped at t = 1 s; start a new Session to run again"
        assert isinstance(caught.value, tandem.TandemError) and isinstance(caught.value, RuntimeError)
    # Reading what was recorded still works.
    assert len(session.recording()) == 10 and session.stop()["frames"] == 100


def test_a_dict_configuration_with_none_names_its_key(tmp_path: Path) -> None:
    config = {
        "model": str(ROOT / "models" / "examples" / "cruise_control.json"),
        "frame": "10ms",
        "record": {"file": "dict.csv", "signals": ["v", None]},
    }
    with pytest.raises(tandem.ConfigError) as caught:
        tandem.Session(config, results=tmp_path)
    assert str(caught.value) == (
        "<dict>: record.signals[1]: None is no value of a configuration; give a value, or leave the key out for "
        "its default"
    )
    assert (caught.value.file, caught.value.key) == ("<dict>", "record.signals[1]")
    config["record"] = {"file": None}
    with pytest.raises(tandem.ConfigError, match=r"^<dict>: record\.file: None"):
        tandem.Session(config, results=tmp_path)


def test_session_parameters_take_numpy_values_and_refuse_non_finite_ones(tmp_path: Path) -> None:
    with tandem.Session(CRUISE, results=tmp_path) as session:
        session.run_for(0.1)
        session.set_parameter("speed_map.gain", np.float32(40.0))
        session.wait_until(lambda s: s["v_ref"] == 20.0, timeout=1)
        session.set_parameter("speed_map.gain", np.array(30))
        session.wait_until(lambda s: s["v_ref"] == 15.0, timeout=1)
        with pytest.raises(tandem.ModelError) as caught:
            session.set_parameter("speed_map.gain", np.float64("nan"))
        assert str(caught.value) == "speed_map.gain: nan is not a finite number; give a finite value"
        assert (caught.value.block, caught.value.key) == ("speed_map", "gain")


def test_a_run_fault_names_the_block_its_message_names() -> None:
    fault = tandem._tandem.run_fault('at t = 2 s: non-finite value NaN in block "plant/root" output 1')
    assert isinstance(fault, tandem.RunFault) and fault.block == "plant/root"
    assert tandem._tandem.run_fault("the run ended at t = 3 s").block is None
