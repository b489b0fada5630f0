"""Reads an A2L file with pya2l (pya2ldb on PyPI), a second independent
reader, and prints what it found, one tab-separated line per item:

    M name long_identifier ecu_address conversion lower upper
    C name long_identifier address deposit conversion lower upper
    U compu_method_name conversion_type unit
    D diagnostic   (each message of pya2l's validator)

Usage: pya2l_peer.py FILE.a2l (the database goes beside the file)."""

import logging
import sys

import pya2l
from pya2l import model
from pya2l.api.validate import Validator


def main():
    logging.disable(logging.CRITICAL)
    session = pya2l.import_a2l(
        sys.argv[1], encoding="utf-8", remove_existing=True, progress_bar=False, loglevel="ERROR"
    )
    out = []
    for m in session.query(model.Measurement).order_by(model.Measurement.rid):
        out.append(
            ["M", m.name, m.longIdentifier, str(m.ecu_address.address), m.conversion,
             repr(m.lowerLimit), repr(m.upperLimit)]
        )
    for c in session.query(model.Characteristic).order_by(model.Characteristic.rid):
        out.append(
            ["C", c.name, c.longIdentifier, str(c.address), c.deposit, c.conversion,
             repr(c.lowerLimit), repr(c.upperLimit)]
        )
    for cm in session.query(model.CompuMethod).order_by(model.CompuMethod.rid):
        out.append(["U", cm.name, cm.conversionType, cm.unit])
    for message in Validator(session)():
        out.append(["D", f"{message.type.name}: {message.text}"])
    session.close()
    for line in out:
        print("\t".join(line))


if __name__ == "__main__":
    main()
