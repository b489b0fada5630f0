#!/usr/bin/env python3
"""autosar-e2e (import `e2e`) as the peer of Tandem's E2E protection
(io/e2e/tests/e2e_autosar.rs).

Reads all of stdin, then answers each request line with one line:

    protect PROFILE ID MODE LENGTH OFFSET HEX  -> the payload autosar-e2e
        protects from HEX (incrementing the counter HEX carries), in hex
    check PROFILE ID MODE LENGTH OFFSET HEX    -> 1 if autosar-e2e accepts
        HEX, else 0
    crc KIND HEX                               -> the checksum of HEX in
        decimal: autosar-e2e's CRC of KIND (crc8, crc8_h2f, crc16,
        crc32_p4) or, for xor and sum, Python's

PROFILE is 1, 2, 5 or 11; ID the data ID in decimal (for profile 2 the
16 data IDs in hex); MODE autosar-e2e's data ID mode constant; LENGTH the
protected length and OFFSET the header's byte offset. A request that
fails is answered with `error ...`, so the test can say which one.
"""

import sys

import e2e


CRCS = {
    "crc8": e2e.crc.calculate_crc8,
    "crc8_h2f": e2e.crc.calculate_crc8_h2f,
    "crc16": e2e.crc.calculate_crc16,
    "crc32_p4": e2e.crc.calculate_crc32_p4,
}


def checksum(kind, data):
    if kind == "xor":
        value = 0
        for b in data:
            value ^= b
        return value
    if kind == "sum":
        return sum(data) % 256
    return CRCS[kind](data)


def answer(line):
    if line.startswith("crc "):
        _, kind, payload = line.split()
        return str(checksum(kind, bytes.fromhex(payload)))
    op, profile, data_id, mode, length, offset, payload = line.split()
    data = bytearray.fromhex(payload)
    mode, length, offset = int(mode), int(length), int(offset)
    if profile == "2":
        ids = bytes.fromhex(data_id)
        if op == "protect":
            e2e.p02.e2e_p02_protect(data, ids, length=length, increment_counter=True)
            return data.hex()
        return str(int(e2e.p02.e2e_p02_check(data, ids, length=length)))
    data_id = int(data_id)
    if profile == "5":
        if op == "protect":
            e2e.p05.e2e_p05_protect(data, data_id, length=length, offset=offset, increment_counter=True)
            return data.hex()
        return str(int(e2e.p05.e2e_p05_check(data, data_id, length=length, offset=offset)))
    module, protect, check = {
        "1": (e2e.p01, "e2e_p01_protect", "e2e_p01_check"),
        "11": (e2e.p11, "e2e_p11_protect", "e2e_p11_check"),
    }[profile]
    if op == "protect":
        getattr(module, protect)(
            data, data_id, data_id_mode=mode, length=length, offset=offset, increment_counter=True
        )
        return data.hex()
    return str(int(getattr(module, check)(data, data_id, data_id_mode=mode, length=length, offset=offset)))


def main():
    out = []
    for line in sys.stdin.read().splitlines():
        try:
            out.append(answer(line))
        except Exception as e:  # reported to the test, line by line
            out.append(f"error {type(e).__name__}: {e}".replace("\n", " "))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
