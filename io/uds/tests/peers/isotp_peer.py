"""python-can-isotp on Tandem's CAN-over-UDP bus: receives COUNT ISO-TP
messages and sends each back reversed, then prints every frame it heard on
the bus (its own included, multicast loops them back) as one JSON line:
[[identifier, kernel receive timestamp, hex data], ...].
Usage: isotp_peer.py JSON, with keys port, txid, rxid, fd, tx_dl, padding
(null or a byte), blocksize, stmin, extended (null or [target, source]),
max_frame_size, count."""
import json
import sys

import can
import can.interfaces.udp_multicast  # noqa: F401
import isotp

cfg = json.loads(sys.argv[1])
bus = can.Bus(interface="udp_multicast", channel="239.74.163.2", port=cfg["port"], fd=cfg["fd"])
heard = []


class RecordingStack(isotp.CanStack):
    """A CanStack that also keeps every frame it reads, with its timestamp."""

    def _rx_canbus(self, timeout):
        msg = self.bus.recv(timeout)
        if msg is not None:
            heard.append([msg.arbitration_id, msg.timestamp, msg.data.hex()])
        return isotp.protocol._python_can_to_isotp_message(msg)


if cfg["extended"] is None:
    address = isotp.Address(isotp.AddressingMode.Normal_11bits, txid=cfg["txid"], rxid=cfg["rxid"])
else:
    target, source = cfg["extended"]
    address = isotp.Address(isotp.AddressingMode.Extended_11bits, txid=cfg["txid"], rxid=cfg["rxid"],
                            target_address=target, source_address=source)
params = {
    "stmin": cfg["stmin"],
    "blocksize": cfg["blocksize"],
    "tx_padding": cfg["padding"],
    "can_fd": cfg["fd"],
    "tx_data_length": cfg["tx_dl"],
    "max_frame_size": cfg["max_frame_size"],
    "blocking_send": True,
}
stack = RecordingStack(bus, address=address, params=params)
stack.start()
print("ready", flush=True)
for _ in range(cfg["count"]):
    message = stack.recv(block=True, timeout=20)
    if message is None:
        print("timeout waiting for a message", file=sys.stderr, flush=True)
        break
    stack.send(bytes(reversed(message)), send_timeout=20)
stack.stop()
bus.shutdown()
print(json.dumps(heard), flush=True)
