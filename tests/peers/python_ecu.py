"""A python-can ECU against the Tandem plant: joins the CAN-over-UDP bus
(python-can's udp_multicast) on the port given, sends ECU_Command with a
constant torque request every 10 ms (encoded by cantools from the DBC),
and prints every VehicleSpeed it decodes as `time speed` lines, times
from its first command, after a first line `ready` once it is on the bus.
Usage: python_ecu.py DBC PORT SECONDS TORQUE"""
import sys
import time

import can
import can.interfaces.udp_multicast  # noqa: F401  (registers the interface)
import cantools

dbc, port, seconds, torque = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
db = cantools.database.load_file(dbc)
command = db.get_message_by_name("ECU_Command")
speeds = db.get_message_by_name("VCU_Speeds")
bus = can.Bus(interface="udp_multicast", channel="239.74.163.2", port=port)
print("ready", flush=True)
start = time.monotonic()
next_send = start
while time.monotonic() - start < seconds:
    now = time.monotonic()
    if now >= next_send:
        data = command.encode({"TorqueRequest": torque, "BrakePressure": 0.0, "RoadGrade": 0.0, "CmdCrc": 0, "CmdCounter": 0})
        bus.send(can.Message(arbitration_id=command.frame_id, data=data, is_extended_id=False))
        next_send += 0.01
    msg = bus.recv(max(0.0, min(0.005, next_send - time.monotonic())))
    if msg is not None and msg.arbitration_id == speeds.frame_id:
        print(f"{time.monotonic() - start:.4f} {speeds.decode(msg.data)['VehicleSpeed']}", flush=True)
bus.shutdown()
