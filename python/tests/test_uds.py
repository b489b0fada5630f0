"""udsoncan's client over a Tandem bus node (``Bus.isotp`` and
``tandem.uds.Connection``) against the example ECU's diagnostic server,
run on the real clock on an in-process bus."""

from pathlib import Path

import tandem
from conftest import ROOT

try:
    import tandem.uds
    import udsoncan
    from udsoncan.client import Client
except ImportError as e:  # a failure, not a skip: CI installs it
    raise ImportError("udsoncan missing: run .ci/run (it installs the package's test extras)") from e

HIL = ROOT / "python" / "examples" / "hil"


def test_udsoncan_reads_the_ecus_dids_and_dtc_over_a_bus_node(tmp_path: Path) -> None:
    # The example ECU with diagnostics of its own instead of the example's.
    text = (HIL / "ecu.toml").read_text().split("\n# Diagnostics:")[0]
    text = text.replace("../../../", f"{ROOT}/")
    text += """
[bus.diagnostics]
request_id = 0x7E0
response_id = 0x7E8
stmin = 1

[[bus.diagnostics.did]]
id = 0x0101
signal = "speed_setpoint"
scale = 0.001

[[bus.diagnostics.did]]
id = 0x0102
signal = "torque_request"
scale = 0.1
signed = true

[[bus.diagnostics.dtc]]
code = 0xC10000
output = "speed_deviation"
"""
    config = tmp_path / "ecu.toml"
    config.write_text(text)
    client_config = dict(udsoncan.configs.default_client_config)
    client_config["data_identifiers"] = {0x0101: ">H", 0x0102: ">h"}
    with tandem.Session(config, clock="real", duration=30, results=tmp_path) as session:
        session.set_input("speed_setpoint", 12.5)
        with session.bus("can0") as bus:
            connection = tandem.uds.Connection(bus.isotp(0x7E0, 0x7E8, padding=0x55))
            with Client(connection, config=client_config, request_timeout=2) as client:
                session.wait_until(lambda s: s["torque_request"] > 0, timeout=5)
                values = client.read_data_by_identifier([0x0101, 0x0102]).service_data.values
                assert values[0x0101][0] == 12500
                # The vehicle stands (no plant): 12.5 m/s below the set point.
                assert values[0x0102][0] == 3000  # torque at its 300 N m limit
                dtcs = client.get_dtc_by_status_mask(0x08).service_data.dtcs
                assert [(d.id, d.status.get_byte_as_int()) for d in dtcs] == [(0xC10000, 0x2F)]
                # Back at the set point: the test passes, the DTC stays
                # confirmed until cleared.
                session.set_input("speed_setpoint", 0.0)
                while client.read_data_by_identifier(0x0101).service_data.values[0x0101][0] != 0:
                    pass
                assert client.get_supported_dtc().service_data.dtcs[0].status.get_byte_as_int() == 0x2E
                client.clear_dtc(0xFFFFFF)
                assert client.get_supported_dtc().service_data.dtcs[0].status.get_byte_as_int() == 0x00
