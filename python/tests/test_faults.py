"""Frame faults and E2E protection, end to end: faults injected from
Python into the plant's sending give the ECU exactly the receive errors
AUTOSAR's E2E state machine implies; the ECU's timeout handling reacts to a
dropped message; scheduled faults are bit-identical from run to run and
each leaves in the bus log the frames its kind says, checked with cantools
and autosar-e2e as independent decoders."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path
from typing import Dict, List, Tuple

import can
import cantools
import e2e
import pytest

import tandem
from conftest import ROOT, cli, read_csv, same_bits

HIL = ROOT / "python" / "examples" / "hil"
DBC = cantools.database.load_file(str(ROOT / "config" / "examples" / "ev.dbc"))
BMS = DBC.get_message_by_name("BMS_Status")
SPEEDS = DBC.get_message_by_name("VCU_Speeds")
POWERTRAIN = DBC.get_message_by_name("VCU_Powertrain")
#: The battery status's E2E protection in the examples: profile 1A, data
#: ID 0x1F1, the CRC in byte 6 and the counter in the low nibble of byte 7.
BMS_DATA_ID, BMS_OFFSET = 0x1F1, 6


def e2e_counts(session: tandem.Session, message: str) -> Dict[str, int]:
    return session.device("can0")["e2e"][message]


def delta(before: Dict[str, int], after: Dict[str, int]) -> Dict[str, int]:
    """What changed, "ok" left out."""
    return {k: after[k] - before[k] for k in after if k != "ok" and after[k] != before[k]}


# What each fault of the battery status (sent every 100 ms) does to the
# ECU's check, with a maximum counter step of 1. Frames the plant encodes
# but does not send still advance its counter, so the next correct frame
# after them is out of sequence; the ECU uses neither corrupt, repeated nor
# out-of-sequence frames, so three of those in a row (400 ms without a
# frame it accepts) run past its 350 ms timeout.
EXPECTED: List[Tuple[dict, Dict[str, int]]] = [
    ({"kind": "bad_crc", "count": 1}, {"crc": 1, "wrong sequence": 1}),
    ({"kind": "stuck_counter", "count": 3}, {"repeated": 2}),
    ({"kind": "repeat", "times": 2, "count": 1}, {"repeated": 1}),
    ({"kind": "drop", "count": 1}, {"wrong sequence": 1}),
    ({"kind": "drop", "count": 2}, {"wrong sequence": 1, "timeouts": 1}),
    ({"kind": "bad_crc", "count": 2}, {"crc": 2, "wrong sequence": 1, "timeouts": 1}),
    ({"kind": "delay", "delay": 0.02, "count": 1}, {}),
    ({"kind": "override", "signal": "BmsState", "value": 2, "count": 1}, {})]


def test_each_injected_fault_gives_the_ecu_the_receive_error_expected(tmp_path: Path) -> None:
    with tandem.Session(HIL / "plant.toml", results=tmp_path) as plant, tandem.Session(
        HIL / "ecu.toml", results=tmp_path
    ) as ecu:
        plant.run_for(1)
        clean = e2e_counts(ecu, "BMS_Status")
        assert clean["ok"] >= 9 and not delta({k: 0 for k in clean}, clean)
        for request, expected in EXPECTED:
            before = e2e_counts(ecu, "BMS_Status")
            described = plant.fault(message="BMS_Status", **request)
            plant.run_for(1)
            assert delta(before, e2e_counts(ecu, "BMS_Status")) == expected, described
        # A wrong length never reaches the check: the ECU counts the frame
        # as one of the wrong length, and the next one as out of sequence.
        before, lengths = e2e_counts(ecu, "BMS_Status"), ecu.device("can0")["rx wrong length"]
        plant.fault("wrong_length", "BMS_Status", bytes=4, count=1)
        plant.run_for(1)
        assert ecu.device("can0")["rx wrong length"] - lengths == 1
        assert delta(before, e2e_counts(ecu, "BMS_Status")) == {"wrong sequence": 1}
        # The plant checks the ECU's commands: a corrupted one is refused.
        before = e2e_counts(plant, "ECU_Command")
        ecu.fault("bad_crc", "ECU_Command", count=2)
        plant.run_for(0.5)
        assert delta(before, e2e_counts(plant, "ECU_Command")) == {"crc": 2, "wrong sequence": 1}
        faults = plant.device("can0")["faults"]
        assert [f["fault"] for f in faults][:2] == ["bad_crc BMS_Status for 1 frame", "stuck_counter BMS_Status for 3 frames"]
        assert all(f["affected"] >= 1 and f["ended_frame"] is not None for f in faults)


def test_the_ecu_reacts_to_a_dropped_battery_status_after_its_timeout(tmp_path: Path) -> None:
    with tandem.Session(HIL / "plant.toml", results=tmp_path) as plant, tandem.Session(
        HIL / "ecu.toml", results=tmp_path
    ) as ecu:
        plant.run_for(2)
        assert ecu["bms_fault"] == 0
        plant.fault("drop", "BMS_Status", start=2.05, duration=0.5)
        plant.run_for(2)
        counts = e2e_counts(ecu, "BMS_Status")
        assert counts["timeouts"] == 1 and counts["wrong sequence"] == 1
        assert ecu["bms_fault"] == 0, "the status returns to OK after the first frame in sequence"
        rows = ecu.recording()
        fault, t = rows["bms_fault"], rows.time
        raised = t[fault == 1]
        # The last frame before the drop is sent at 2.001 s (every 100 ms
        # from 0.001 s) and taken by the ECU at its 2.01 s frame: the
        # 350 ms timeout fires in its first frame past 2.36 s. The status
        # is "no new data" until the frames return at 2.601 s, whose first
        # is out of sequence (taken at 2.61 s) and the second OK (2.71 s).
        assert raised[0] == pytest.approx(2.37), raised[:3]
        assert raised[-1] == pytest.approx(2.70), raised[-3:]
        assert ((t >= raised[0]) & (t <= raised[-1]) == (fault == 1)).all(), "one run of faults"


SCHEDULE = """
[[bus.fault]]
message = "VCU_Speeds"
kind = "drop"
start = "1s"
duration = "50ms"

[[bus.fault]]
message = "VCU_Powertrain"
kind = "delay"
delay = "20ms"
start = "2s"
count = 1

[[bus.fault]]
message = "VCU_Speeds"
kind = "repeat"
times = 3
start = "3s"
count = 1

[[bus.fault]]
message = "BMS_Status"
kind = "stuck_counter"
start = "4s"
count = 3

[[bus.fault]]
message = "BMS_Status"
kind = "bad_crc"
start = "5s"
count = 1

[[bus.fault]]
message = "VCU_Powertrain"
kind = "wrong_length"
bytes = 4
start = "6s"
count = 1

[[bus.fault]]
message = "VCU_Speeds"
kind = "override"
signal = "VehicleSpeed"
value = 99
start = "7s"
count = 2

[[bus.fault]]
kind = "burst"
id = 0x7F0
per_frame = 2
start = "8s"
duration = "3ms"

[[bus.fault]]
kind = "stop"
start = "9s"
duration = "100ms"
"""


def scheduled_run(tmp_path: Path, name: str) -> Tuple[List[Tuple[float, int, bytes]], Path]:
    config = (HIL / "plant.toml").read_text().replace('duration = "600s"', 'duration = "10s"')
    config = config.replace('"../../../config/examples/ev.dbc"', json.dumps(str(ROOT / "config/examples/ev.dbc")))
    config = config.replace('file = "plant.csv"', 'file = "plant.csv"\nbus_log = "bus.log"')
    path = tmp_path / f"{name}.toml"
    path.write_text(config + SCHEDULE)
    results = tmp_path / name
    cli("run", path, "--virtual-clock", "--results", results)
    frames = []
    for line in (results / "bus.log").read_text().splitlines():
        stamp, _, frame = line.split()[:3]
        ident, data = frame.split("#")
        frames.append((float(stamp[1:-1]), int(ident, 16), bytes.fromhex(data)))
    return frames, results


def test_scheduled_faults_are_bit_identical_and_leave_what_their_kind_says(tmp_path: Path) -> None:
    first, a = scheduled_run(tmp_path, "a")
    second, b = scheduled_run(tmp_path, "b")
    assert (a / "bus.log").read_bytes() == (b / "bus.log").read_bytes()
    assert same_bits(read_csv(a / "plant.csv")[1], read_csv(b / "plant.csv")[1])

    def sent(message, start, end) -> List[Tuple[float, bytes]]:
        return [(t, d) for t, i, d in first if i == message.frame_id and start <= t < end]

    # drop: no speeds in [1.00, 1.05) s, every 10 ms around it.
    assert [round(t, 3) for t, _ in sent(SPEEDS, 0.95, 1.1)] == [0.951, 0.961, 0.971, 0.981, 0.991, 1.051, 1.061, 1.071, 1.081, 1.091]
    # delay: the powertrain frame due at 2.001 s goes out at 2.021 s.
    assert [round(t, 3) for t, _ in sent(POWERTRAIN, 1.99, 2.03)] == [1.991, 2.011, 2.021, 2.021]
    # repeat: three copies of the speeds at 3.001 s.
    copies = sent(SPEEDS, 3.0, 3.005)
    assert len(copies) == 3 and len({d for _, d in copies}) == 1
    # stuck counter: the battery status's counter holds for three frames.
    counters = [DBC.decode_message("BMS_Status", d)["BmsCounter"] for _, d in sent(BMS, 3.85, 4.45)]
    assert counters[1] == counters[2] == counters[3] != counters[4] and counters[0] != counters[1], counters

    def e2e_ok(d: bytes) -> bool:
        return e2e.p01.e2e_p01_check(bytearray(d), BMS_DATA_ID, data_id_mode=0, length=8, offset=BMS_OFFSET)

    # bad CRC: autosar-e2e refuses the frame at 5.001 s and accepts its neighbours.
    assert [e2e_ok(d) for _, d in sent(BMS, 4.85, 5.15)] == [True, False, True]
    # wrong length: the powertrain frame at 6.001 s has 4 bytes.
    assert [len(d) for _, d in sent(POWERTRAIN, 5.99, 6.02)] == [8, 4, 8]
    # override: VehicleSpeed reads 99 m/s in two frames, then the model's value again.
    speeds = [DBC.decode_message("VCU_Speeds", d)["VehicleSpeed"] for _, d in sent(SPEEDS, 6.99, 7.03)]
    assert speeds[1:3] == [99, 99] and speeds[0] != 99 and speeds[3] != 99
    # burst: two frames of 0x7F0 in each of three frames.
    burst = [t for t, i, _ in first if i == 0x7F0]
    assert len(burst) == 6 and all(7.999 < t < 8.003 for t in burst)
    # stop: nothing at all for 100 ms.
    assert not [t for t, _, _ in first if 9.0 <= t < 9.1]
    assert [t for t, _, _ in first if 8.9 <= t < 9.0] and [t for t, _, _ in first if 9.1 <= t < 9.2]


def test_a_fault_request_is_checked_like_a_configuration(tmp_path: Path) -> None:
    with tandem.Session(HIL / "plant.toml", results=tmp_path) as plant:
        with pytest.raises(tandem.ConfigError, match='unknown fault kind "jam"; use one of: drop, delay'):
            plant.fault("jam", "BMS_Status")
        with pytest.raises(tandem.ConfigError, match='this bus sends no message "ECU_Command"'):
            plant.fault("drop", "ECU_Command")
        with pytest.raises(tandem.ConfigError, match="needs the message's E2E protection"):
            plant.fault("bad_crc", "VCU_Speeds")
        with pytest.raises(tandem.ConfigError, match='no bus "can9"'):
            plant.fault("drop", "VCU_Speeds", bus="can9")
        with pytest.raises(tandem.ConfigError, match="give `duration` or `count`, not both"):
            plant.fault("drop", "VCU_Speeds", duration=1, count=2)


def test_each_fault_is_marked_in_asc_and_blf_bus_logs_which_python_can_still_reads(tmp_path: Path) -> None:
    frames, results = scheduled_run(tmp_path, "candump")
    config = tmp_path / "candump.toml"
    for log in ("marks.asc", "marks.blf"):
        cli("run", config, "--virtual-clock", "--results", tmp_path / "r", "--bus-log", tmp_path / log)
    asc = (tmp_path / "marks.asc").read_text().splitlines()
    marks = [line for line in asc if line.startswith("//") and "tandem fault" in line]
    assert marks[:2] == [
        "//  1.000000 tandem fault on can0 begins: drop VCU_Speeds for 0.05 s",
        "//  1.050000 tandem fault on can0 ends: drop VCU_Speeds for 0.05 s",
    ]
    assert len(marks) == 18, "each of the 9 faults begins and ends"
    # python-can's readers take the comments in stride: every frame is there.
    assert sum(1 for _ in can.ASCReader(str(tmp_path / "marks.asc"))) == len(frames)
    blf = list(can.BLFReader(str(tmp_path / "marks.blf")))
    assert [(m.arbitration_id, bytes(m.data)) for m in blf] == [(i, d) for _, i, d in frames]
    # The marks are APP_TEXT objects (type 65) inside the zlib containers.
    raw, texts, at = (tmp_path / "marks.blf").read_bytes(), [], 144
    while at + 16 <= len(raw):
        size, kind = struct.unpack_from("<II", raw, at + 8)
        if kind == 10:
            inner = zlib.decompress(raw[at + 32 : at + size])
            offset = 0
            while offset + 16 <= len(inner):
                header, _, size_in, kind_in = struct.unpack_from("<HHII", inner, offset + 4)
                if kind_in == 65:
                    length = struct.unpack_from("<I", inner, offset + header + 8)[0]
                    texts.append(inner[offset + header + 16 : offset + header + 16 + length].decode())
                offset += size_in + size_in % 4
        at += size + size % 4
    assert texts == [m.split(" ", 3)[3] for m in marks]
