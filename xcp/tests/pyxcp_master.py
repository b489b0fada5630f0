"""pyXCP as the master of Tandem's demo XCP slave (examples/demo_slave.rs).

Usage: pyxcp_master.py PROTOCOL PORT   (PROTOCOL: UDP or TCP)

Connects, reads the A2L name and text with GET_ID, reads a measurement,
calibrates `gain` and reads it back, switches to the reference page and
back, runs a DAQ list of three measurements on the 1 kHz event for 0.5 s
and checks every sample against the demo's closed form and every
timestamp step against the 1 ms period, then disconnects. Prints `ok` on
success; any failed check raises.
"""

import math
import os
import struct
import sys
import tempfile
import time

protocol, port = sys.argv[1], int(sys.argv[2])
conf = os.path.join(tempfile.mkdtemp(), "pyxcp_conf.py")
with open(conf, "w") as f:
    f.write(
        "c = get_config()\n"
        "c.Transport.layer = 'ETH'\n"
        "c.Transport.Eth.host = '127.0.0.1'\n"
        f"c.Transport.Eth.port = {port}\n"
        f"c.Transport.Eth.protocol = '{protocol}'\n"
    )
sys.argv = [sys.argv[0], "-c", conf]

from pyxcp.cmdline import ArgumentParser  # noqa: E402
from pyxcp.daq_stim import DaqList, DaqOnlinePolicy  # noqa: E402
from pyxcp.types import XcpResponseError  # noqa: E402


MEASUREMENT = 0x0001_0000  # map.rs: measurement i at base + 8 i
CHARACTERISTIC = 0x0002_0000
SINE_1HZ, SINE_10HZ, TIME_S = (MEASUREMENT + 8 * i for i in range(3))
GAIN = CHARACTERISTIC


class Collect(DaqOnlinePolicy):
    def __init__(self, lists):
        super().__init__(lists)
        self.rows = []

    def initialize(self):
        pass

    def finalize(self):
        pass

    def on_daq_list(self, daq_list, timestamp0, timestamp1, payload):
        self.rows.append((timestamp1, list(payload)))


def f64(raw):
    return struct.unpack("<d", bytes(raw))[0]


lists = [
    DaqList(
        name="demo",
        event_num=0,
        stim=False,
        enable_timestamps=True,
        measurements=[
            ("sine_1hz", SINE_1HZ, 0, "F64"),
            ("sine_10hz", SINE_10HZ, 0, "F64"),
            ("time_s", TIME_S, 0, "F64"),
        ],
        priority=0,
        prescaler=1,
    )
]
policy = Collect(lists)
with ArgumentParser(description="tandem xcp").run(policy=policy) as x:
    x.connect()
    assert x.slaveProperties.maxCto == 255 and x.slaveProperties.maxDto == 1400, x.slaveProperties
    x.getCommModeInfo()
    assert x.identifier(1) == "demo_slave", x.identifier(1)
    assert x.identifier(4).startswith("ASAP2_VERSION 1 71"), "GET_ID 4 uploads the A2L text"

    t = f64(x.shortUpload(8, TIME_S))
    assert 0 < t < 3600, t

    x.setMta(GAIN)
    x.download(struct.pack("<d", 2.5))
    assert f64(x.shortUpload(8, GAIN)) == 2.5

    x.setCalPage(0x03, 0, 1)
    assert x.getCalPage(0x01, 0) == 1 and x.getCalPage(0x02, 0) == 1
    assert f64(x.shortUpload(8, GAIN)) == 1.0, "the reference page holds gain as loaded"
    x.setMta(GAIN)
    try:
        x.download(struct.pack("<d", 3.0))
        raise AssertionError("DOWNLOAD to the reference page succeeded")
    except (XcpResponseError, SystemExit, Exception) as e:
        # pyXCP's error handler ends a refused command with SystemExit.
        assert "WRITE_PROTECTED" in repr(e), repr(e)
    x.setCalPage(0x03, 0, 0)
    assert f64(x.shortUpload(8, GAIN)) == 2.5, "the working page kept its value"

    policy.setup()
    policy.start()
    time.sleep(0.5)
    policy.stop()
    time.sleep(0.1)
    x.disconnect()

rows = policy.rows
assert len(rows) >= 200, f"{len(rows)} DAQ samples in 0.5 s at 1 kHz"
for (ts0, _), (ts1, _) in zip(rows, rows[1:]):
    assert ts1 - ts0 == 1_000_000, f"timestamp step {ts1 - ts0} ns, want the 1 ms period"
# pyXCP counts DTO timestamps from the first sample's.
ts_first, (_, _, t_first) = rows[0]
for ts, (s1, s10, t) in rows:
    assert round((t - t_first) * 1e9) == ts - ts_first, f"time_s {t} at timestamp {ts} ns"
    assert s1 == 2.5 * math.sin(2 * math.pi * t), (t, s1)
    assert s10 == 2.5 * math.sin(10 * 2 * math.pi * t), (t, s10)
print("ok", len(rows))
