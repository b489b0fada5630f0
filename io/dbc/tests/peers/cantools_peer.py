#!/usr/bin/env python3
"""cantools as the peer of Tandem's DBC codec (io/dbc/tests/dbc_cantools.rs).

Reads all of stdin, then answers each request line with one line:

    first line            the DBC file to load (strictly: overlaps are errors)
    encode MSG A=1.5 B=2  -> the payload cantools encodes, in hex
    decode MSG 0a0b...    -> A=physical:raw B=physical:raw (Python reprs)

A request that fails is answered with `error ...`, so the test can say
which one.
"""

import sys

import cantools


def answer(db, line):
    op, name, *rest = line.split()
    message = db.get_message_by_name(name)
    if op == "encode":
        values = {}
        for item in rest:
            signal, value = item.split("=")
            values[signal] = float(value)
        return message.encode(values, scaling=True, padding=False, strict=True).hex()
    if op == "decode":
        data = bytes.fromhex(rest[0]) if rest else b""
        physical = message.decode(data, decode_choices=False, scaling=True)
        raw = message.decode(data, decode_choices=False, scaling=False)
        return " ".join(f"{s}={physical[s]!r}:{raw[s]!r}" for s in physical)
    raise ValueError(f"unknown request {op!r}")


def main():
    lines = sys.stdin.read().splitlines()
    db = cantools.database.load_file(lines[0], strict=True)
    out = []
    for line in lines[1:]:
        try:
            out.append(answer(db, line))
        except Exception as e:  # reported to the test, line by line
            out.append(f"error {type(e).__name__}: {e}".replace("\n", " "))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
