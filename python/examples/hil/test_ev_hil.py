"""Example HIL tests: the virtual ECU's speed controller
(`models/examples/ev_speed_controller.json`) against the built-in EV plant,
on one in-process CAN bus with the signals of `config/examples/ev.dbc`.

Run them with the package installed (its pytest plugin gives the
``tandem_session`` fixture): ``pytest python/examples`` on the virtual
clock (deterministic, about as fast as the machine allows), or
``pytest python/examples --tandem-clock real`` on the real one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent

#: How close the vehicle speed must come to the set-point (m/s).
TOLERANCE = 0.25
#: How soon after a set-point change (s).
SETTLING_TIME = 20.0
#: How long it must then stay within the tolerance (s).
HOLD = 5.0


@pytest.fixture
def rig(tandem_session):
    """The plant and the ECU, started together."""
    plant = tandem_session(HERE / "plant.toml")
    ecu = tandem_session(HERE / "ecu.toml")
    return plant, ecu


@pytest.mark.parametrize("setpoints", [(10.0, 20.0, 5.0)])
def test_the_speed_controller_reaches_each_setpoint(rig, setpoints) -> None:
    plant, ecu = rig
    for setpoint in setpoints:
        ecu["speed_setpoint"] = setpoint
        inside_since = []

        def settled(s) -> bool:
            # Within the tolerance, and there for HOLD seconds (not passing through).
            if abs(s["vehicle_speed"] - setpoint) >= TOLERANCE:
                inside_since.clear()
                return False
            inside_since[:] = inside_since or [s.time]
            return s.time - inside_since[0] >= HOLD

        took = plant.wait_until(
            settled,
            timeout=SETTLING_TIME + HOLD,
            what=f"vehicle speed within {TOLERANCE} m/s of {setpoint} m/s for {HOLD} s",
        )
        assert took - HOLD <= SETTLING_TIME


def test_a_receive_timeout_returns_the_plant_to_its_defaults(rig) -> None:
    plant, ecu = rig
    ecu["speed_setpoint"] = 15.0
    plant.wait_until(lambda s: s["motor_torque"] > 100, timeout=2, what="the motor pulling")
    timeouts = plant.device("can0")["rx timeouts"]
    ecu.stop()
    # ECU_Command times out after 100 ms and the plant's torque and brake
    # requests return to 0 (on_timeout = "default"); the motor torque
    # follows within the motor's response.
    plant.wait_until(lambda s: abs(s["motor_torque"]) < 1.0, timeout=0.5, what="motor torque back to 0")
    assert plant.device("can0")["rx timeouts"] == timeouts + 1


def test_faults_on_the_bus_are_counted(rig) -> None:
    plant, _ = rig
    with plant.bus("can0") as bus:
        command = bus.receive(timeout=0.5, message="ECU_Command")
        assert command is not None and {"TorqueRequest", "BrakePressure"} <= set(command.signals)
        # Counted from here: the ECU is sending (before its first command the
        # plant may already have counted a receive timeout, as it should).
        before = plant.device("can0")
        bus.send_frame(command.id, command.data[:3])  # a mapped message, too short
        bus.send_frame(0x7FF, b"\x01\x02")  # an identifier nobody maps
        plant.run_for(0.01)
        after = plant.device("can0")
    assert after["rx wrong length"] == before["rx wrong length"] + 1
    assert after["rx unmapped ids"] == before["rx unmapped ids"] + 1
    # The plant ran on: the bad frames changed nothing else.
    assert after["rx timeouts"] == before["rx timeouts"]


def test_a_lost_battery_status_sets_the_ecus_dtc(rig) -> None:
    """A frame fault injected into the plant's sending, and the ECU's
    diagnostic trouble code read over UDS with udsoncan, as a test bench
    checks an ECU's timeout handling."""
    import tandem.uds
    import udsoncan
    from udsoncan.client import Client

    plant, ecu = rig
    plant.run_for(1)
    with ecu.bus("can0") as bus:
        connection = tandem.uds.Connection(bus.isotp(0x7E0, 0x7E8))
        config = dict(udsoncan.configs.default_client_config)
        with Client(connection, config=config, request_timeout=2) as client:

            def u0111() -> int:
                [dtc] = client.get_supported_dtc().service_data.dtcs
                return dtc.status.get_byte_as_int()

            assert u0111() & 0x09 == 0, "neither failing nor confirmed"
            plant.fault("drop", "BMS_Status", duration=0.5)
            ecu.wait_until(lambda s: s["bms_fault"] == 1, timeout=1, what="the ECU noticing the battery gone")
            assert u0111() & 0x01, "testFailed"
            ecu.wait_until(lambda s: s["bms_fault"] == 0, timeout=2, what="the battery status back")
            assert u0111() & 0x09 == 0x08, "passing again, and confirmed until cleared"
            client.clear_dtc(0xFFFFFF)
            assert u0111() & 0x09 == 0
