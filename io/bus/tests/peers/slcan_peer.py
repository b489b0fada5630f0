"""python-can's slcan interface on a serial port, driven from stdin.

Usage: slcan_peer.py PORT BITRATE

Prints "ready" once the bus is open, then answers one line per command:

  send EXT RTR FD BRS ID_HEX LEN DATA_HEX|-   -> "sent"
  recv TIMEOUT_SECONDS                        -> "rx EXT RTR FD BRS ID_HEX LEN DATA_HEX|-" or "none"
  quit

EXT, RTR, FD, BRS are 0 or 1; LEN is the payload length in bytes (for a
remote frame, the length requested).
"""

import sys

import can


def main() -> None:
    port, bitrate = sys.argv[1], int(sys.argv[2])
    bus = can.Bus(interface="slcan", channel=port, bitrate=bitrate, sleep_after_open=0)
    print("ready", flush=True)
    try:
        for line in sys.stdin:
            words = line.split()
            if not words:
                continue
            if words[0] == "send":
                ext, rtr, fd, brs = (w == "1" for w in words[1:5])
                data = None if words[7] == "-" else bytes.fromhex(words[7])
                bus.send(
                    can.Message(
                        arbitration_id=int(words[5], 16),
                        is_extended_id=ext,
                        is_remote_frame=rtr,
                        is_fd=fd,
                        bitrate_switch=brs,
                        dlc=int(words[6]),
                        data=data,
                    )
                )
                print("sent", flush=True)
            elif words[0] == "recv":
                msg = bus.recv(float(words[1]))
                if msg is None:
                    print("none", flush=True)
                else:
                    data = msg.data.hex().upper() if msg.data and not msg.is_remote_frame else "-"
                    flags = (msg.is_extended_id, msg.is_remote_frame, msg.is_fd, msg.bitrate_switch)
                    print("rx", *(int(f) for f in flags), f"{msg.arbitration_id:X}", msg.dlc, data, flush=True)
            elif words[0] == "quit":
                break
    finally:
        bus.shutdown()


if __name__ == "__main__":
    main()
