"""udsoncan's client, on python-can-isotp, on Tandem's CAN-over-UDP bus,
against a UDS server at 0x7E0 -> 0x7E8. Prints what it read as
`key=value` lines; after the first part it prints `phase=1` and waits for a
line on stdin (the server's test changes a DTC's test result meanwhile).
Usage: uds_peer.py PORT FD"""
import sys

import can
import can.interfaces.udp_multicast  # noqa: F401
import isotp
import udsoncan
from udsoncan.client import Client
from udsoncan.connections import PythonIsoTpConnection
from udsoncan.exceptions import NegativeResponseException

port, fd = int(sys.argv[1]), sys.argv[2] == "fd"
bus = can.Bus(interface="udp_multicast", channel="239.74.163.2", port=port, fd=fd)
address = isotp.Address(isotp.AddressingMode.Normal_11bits, txid=0x7E0, rxid=0x7E8)
params = {"tx_padding": 0x55, "can_fd": fd, "tx_data_length": 64 if fd else 8, "blocksize": 4, "stmin": 1}
stack = isotp.CanStack(bus, address=address, params=params)
config = dict(udsoncan.configs.default_client_config)
config["data_identifiers"] = {0xF40D: ">H", 0x0101: ">b", 0x0202: ">L", 0x0303: ">H", 0x9999: ">H"}


def out(key, value):
    print(f"{key}={value}", flush=True)


def nrc(call):
    try:
        call()
        return "none"
    except NegativeResponseException as e:
        return f"{e.response.code:#04x}"


def dtcs(response):
    return " ".join(f"{d.id:06X}:{d.status.get_byte_as_int():02X}" for d in response.service_data.dtcs)


with Client(PythonIsoTpConnection(stack), config=config, request_timeout=5) as client:
    r = client.change_session(3)
    out("session", f"{r.service_data.session_echo} {r.service_data.p2_server_max} {r.service_data.p2_star_server_max}")
    out("tester_present", client.tester_present().positive)
    with client.suppress_positive_response:
        out("tester_present_suppressed", client.tester_present())
    values = client.read_data_by_identifier([0xF40D, 0x0101, 0x0202]).service_data.values
    out("dids", " ".join(f"{k:04X}:{values[k][0]}" for k in sorted(values)))
    out("did_unavailable", nrc(lambda: client.read_data_by_identifier(0x0303)))
    out("did_unknown", nrc(lambda: client.read_data_by_identifier(0x9999)))
    r = client.get_number_of_dtc_by_status_mask(0x08)
    out("confirmed_count", f"{r.service_data.dtc_count} {r.service_data.status_availability.get_byte_as_int():02X}")
    out("confirmed", dtcs(client.get_dtc_by_status_mask(0x08)))
    out("supported", dtcs(client.get_supported_dtc()))
    out("phase", 1)
    sys.stdin.readline()
    out("supported_after_pass", dtcs(client.get_supported_dtc()))
    client.clear_dtc(0xFFFFFF)
    out("supported_after_clear", dtcs(client.get_supported_dtc()))
    out("security_access", nrc(lambda: client.request_seed(1)))
    out("bad_session", nrc(lambda: client.change_session(0x05)))
    out("session_back", client.change_session(1).service_data.session_echo)
bus.shutdown()
out("phase", 2)
