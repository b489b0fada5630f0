"""pyXCP as the master of a Tandem run's XCP slave (tests/xcp.rs).

Usage: pyxcp_ev.py PORT OUT_DIR LAST_FRAME

Over TCP on 127.0.0.1:PORT: connects, reads the A2L's name (GET_ID 1) and
text (GET_ID 4, uploaded) and takes every MEASUREMENT's address and the
`ev.mass` CHARACTERISTIC's from it; puts every measurement on one DAQ
list at the "frame" event with timestamps and starts it (the run, which
waits for a master, starts its frames then). Once the car moves faster
than 1 m/s it polls the speed (SHORT_UPLOAD) and calibrates `ev.mass` to
3600 kg; 300 frames later it
switches to the reference page (the mass as loaded, 1800 kg), and 300
frames after that back to the working page. It reads frames until
LAST_FRAME, stops DAQ and disconnects.

Writes OUT_DIR/daq.csv (frame and every measurement, each value as
Python's repr: the shortest string that reads back to the same double)
and OUT_DIR/uploaded.a2l, and prints `ok ROWS`. Any failed check raises.
"""

import os
import re
import struct
import sys
import tempfile
import threading
import time

port, out_dir, last_frame = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
conf = os.path.join(tempfile.mkdtemp(), "pyxcp_conf.py")
with open(conf, "w") as f:
    f.write(
        "c = get_config()\n"
        "c.Transport.layer = 'ETH'\n"
        "c.Transport.Eth.host = '127.0.0.1'\n"
        f"c.Transport.Eth.port = {port}\n"
        "c.Transport.Eth.protocol = 'TCP'\n"
    )
sys.argv = [sys.argv[0], "-c", conf]

from pyxcp.cmdline import ArgumentParser  # noqa: E402
from pyxcp.daq_stim import DaqList, DaqOnlinePolicy  # noqa: E402

FRAME_NS = 1_000_000
DEADLINE_S = 120


class Collect(DaqOnlinePolicy):
    """Keeps every sample with its frame number (timestamp / frame)."""

    def __init__(self, lists):
        super().__init__(lists)
        self.rows = []
        self.changed = threading.Condition()

    def initialize(self):
        pass

    def finalize(self):
        pass

    def on_daq_list(self, daq_list, timestamp0, timestamp1, payload):
        with self.changed:
            self.rows.append((timestamp1, list(payload)))
            self.changed.notify_all()

    def wait_for(self, predicate, what):
        end = time.monotonic() + DEADLINE_S
        with self.changed:
            while not predicate(self.rows):
                left = end - time.monotonic()
                assert left > 0, f"no DAQ sample {what} in {DEADLINE_S} s ({len(self.rows)} received)"
                self.changed.wait(left)


def measurements(a2l):
    """(name, address) of every MEASUREMENT, in the file's order."""
    found = re.findall(r"/begin MEASUREMENT (\S+) .*?ECU_ADDRESS (0x[0-9A-Fa-f]+)", a2l, re.S)
    return [(name, int(address, 16)) for name, address in found]


def characteristic(a2l, name):
    m = re.search(r"/begin CHARACTERISTIC " + re.escape(name) + r' "[^"]*" VALUE (0x[0-9A-Fa-f]+)', a2l)
    assert m, f"no CHARACTERISTIC {name} in the A2L"
    return int(m.group(1), 16)


conn = ArgumentParser(description="tandem run's XCP slave")
# The A2L comes from the slave itself, before the DAQ list is made.
with conn.run() as x:
    x.connect()
    name = x.identifier(1)
    a2l = x.identifier(4)
    x.disconnect()
signals = measurements(a2l)
names = [n for n, _ in signals]
for wanted in ("vehicle_speed", "dc_voltage", "motor_torque", "torque_request"):
    assert wanted in names, f"{wanted} is not a MEASUREMENT of the A2L: {names}"
mass = characteristic(a2l, "ev.mass")
speed = names.index("vehicle_speed")

lists = [
    DaqList(
        name="frame",
        event_num=0,
        stim=False,
        enable_timestamps=True,
        measurements=[(n, address, 0, "F64") for n, address in signals],
        priority=0,
        prescaler=1,
    )
]
policy = Collect(lists)
with ArgumentParser(description="tandem run's XCP slave").run(policy=policy) as x:
    x.connect()
    assert x.identifier(1) == name
    x.setCalPage(0x03, 0, 0)
    assert struct.unpack("<d", bytes(x.shortUpload(8, mass)))[0] == 1800.0, "the mass as loaded"
    policy.setup()
    policy.start()

    policy.wait_for(lambda rows: any(p[speed] > 1.0 for _, p in rows), "faster than 1 m/s")
    polled = struct.unpack("<d", bytes(x.shortUpload(8, dict(signals)["vehicle_speed"])))[0]
    assert 1.0 < polled < 30.0, f"vehicle_speed polled by SHORT_UPLOAD: {polled}"
    x.setMta(mass)
    x.download(struct.pack("<d", 3600.0))
    n = len(policy.rows)
    policy.wait_for(lambda rows: len(rows) >= n + 300, "300 frames after the calibration")
    x.setCalPage(0x03, 0, 1)
    assert struct.unpack("<d", bytes(x.shortUpload(8, mass)))[0] == 1800.0, "the reference page"
    n = len(policy.rows)
    policy.wait_for(lambda rows: len(rows) >= n + 300, "300 frames after the reference page")
    x.setCalPage(0x03, 0, 0)
    assert struct.unpack("<d", bytes(x.shortUpload(8, mass)))[0] == 3600.0, "the working page kept its value"

    policy.wait_for(lambda rows: rows[-1][0] >= last_frame * FRAME_NS, f"of frame {last_frame}")
    policy.stop()
    x.disconnect()

rows = policy.rows
ts0 = rows[0][0]
assert ts0 == 0, f"the first sample is frame 0's (timestamp {ts0} ns)"
with open(os.path.join(out_dir, "daq.csv"), "w") as f:
    f.write(",".join(["frame"] + names) + "\n")
    for ts, payload in rows:
        assert ts % FRAME_NS == 0, f"timestamp {ts} ns is not on the 1 ms frame grid"
        f.write(",".join([str(ts // FRAME_NS)] + [repr(v) for v in payload]) + "\n")
with open(os.path.join(out_dir, "uploaded.a2l"), "w") as f:
    f.write(a2l)
print("ok", len(rows))
