"""A tester on `tandem ecu`'s UDS server (request 0x7E0, response 0x7E8):
udsoncan's client on python-can-isotp on the CAN-over-UDP bus. While the
set point ramps (DID 0x0101, 0.001 m/s) it reads the set point and the
torque request (DID 0x0102, 0.1 N m) in one request and prints
`sample SETPOINT_RAW TORQUE_RAW`; once the set point holds 6 m/s it prints
DTC 0xC10000's status (`hold STATUS`), once it is back at 0 the status
again (`after STATUS`), then clears the DTCs and prints it (`cleared STATUS`).
Usage: uds_tester.py PORT"""
import sys
import time

import can
import can.interfaces.udp_multicast  # noqa: F401
import isotp
import udsoncan
from udsoncan.client import Client
from udsoncan.connections import PythonIsoTpConnection
from udsoncan.exceptions import NegativeResponseException, TimeoutException

bus = can.Bus(interface="udp_multicast", channel="239.74.163.2", port=int(sys.argv[1]))
address = isotp.Address(isotp.AddressingMode.Normal_11bits, txid=0x7E0, rxid=0x7E8)
stack = isotp.CanStack(bus, address=address, params={"tx_padding": 0x55})
config = dict(udsoncan.configs.default_client_config)
config["data_identifiers"] = {0x0101: ">H", 0x0102: ">h", 0x0999: ">H"}  # 0x0999: one the ECU does not serve


def status(client):
    dtcs = client.get_supported_dtc().service_data.dtcs
    return " ".join(f"{d.id:06X}:{d.status.get_byte_as_int():02X}" for d in dtcs)


negative = 0
with Client(PythonIsoTpConnection(stack), config=config, request_timeout=1) as client:
    deadline, held = time.monotonic() + 30, False
    while time.monotonic() < deadline:
        try:
            values = client.read_data_by_identifier([0x0101, 0x0102]).service_data.values
        except NegativeResponseException:
            negative += 1
            time.sleep(0.05)  # the run has not started its frames yet
            continue
        except TimeoutException:
            time.sleep(0.05)
            continue
        setpoint, torque = values[0x0101][0], values[0x0102][0]
        if 0 < setpoint < 5900:
            print(f"sample {setpoint} {torque}", flush=True)
        elif setpoint == 6000 and not held:
            print(f"hold {status(client)}", flush=True)
            held = True
        elif setpoint == 0 and held:
            print(f"after {status(client)}", flush=True)
            client.clear_dtc(0xFFFFFF)
            print(f"cleared {status(client)}", flush=True)
            try:
                client.read_data_by_identifier([0x0999])
            except NegativeResponseException as e:
                negative += 1
                print(f"refused {e.response.code:#04x}", flush=True)
            break
        time.sleep(0.02)
print(f"negative {negative}", flush=True)
bus.shutdown()
