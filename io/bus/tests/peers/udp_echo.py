"""python-can on Tandem's CAN-over-UDP bus: echoes every frame with an
identifier below 0x400 back with 0x400 added (extended ones keep their
width), the same data and flags, until it has echoed N frames or waited 10 s.
Usage: udp_echo.py PORT N"""
import sys
import time

import can
import can.interfaces.udp_multicast  # noqa: F401

port, wanted = int(sys.argv[1]), int(sys.argv[2])
bus = can.Bus(interface="udp_multicast", channel="239.74.163.2", port=port)
print("ready", flush=True)
echoed, deadline = 0, time.monotonic() + 10
while echoed < wanted and time.monotonic() < deadline:
    msg = bus.recv(0.1)
    if msg is None or msg.arbitration_id >= 0x400:
        continue  # python-can hears its own frames too
    bus.send(can.Message(arbitration_id=msg.arbitration_id + 0x400, is_extended_id=msg.is_extended_id,
                         is_remote_frame=msg.is_remote_frame, dlc=msg.dlc, data=msg.data, is_fd=msg.is_fd,
                         bitrate_switch=msg.bitrate_switch))
    echoed += 1
bus.shutdown()
print(f"echoed {echoed}", flush=True)
