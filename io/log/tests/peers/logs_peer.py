#!/usr/bin/env python3
"""python-can and asammdf as the peers of Tandem's bus logs
(io/log/tests/log_peers.rs).

    logs_peer.py read-blf FILE          python-can's BLFReader
    logs_peer.py read-mf4 FILE [DBC]    asammdf, and its bus logging
                                        extraction with DBC
    logs_peer.py write-blf FILE         python-can's BLFWriter
    logs_peer.py write-asc FILE         python-can's ASCWriter
    logs_peer.py write-mf4 FILE START [COMPRESSION]
                                        asammdf, times from START (ns), data
                                        blocks compressed as asammdf's save()
                                        does (0 none, 1 deflate, 2
                                        transposed deflate)
    logs_peer.py write-mf4-vlsd FILE START sd|cg
                                        an MF4 file whose data bytes are
                                        variable-length signal data: in SD
                                        blocks (as CANedge loggers write
                                        them) or in a VLSD channel group
                                        (as CANape does); asammdf 8.8 writes
                                        neither for byte arrays, so the
                                        blocks are laid out here, and
                                        read-mf4 (asammdf) is their check

Frames go in and out one per line:

    TIME CHANNEL ID EXT FD BRS ESI REMOTE TX DATA

TIME in nanoseconds when written (an integer), in seconds as the peer
reads it (a Python float repr); CHANNEL counted from 1; the flags 0 or 1;
DATA in hex (`-` for none). read-mf4 prints `start SECONDS` first and,
with a DBC, `signal NAME TIME VALUE` lines for the extracted signals;
read-blf prints `start SECONDS` (the header's start time) first.
"""

import sys


def frames_in():
    for line in sys.stdin.read().splitlines():
        t, channel, can_id, ext, fd, brs, esi, remote, tx, data = line.split()
        yield (
            int(t),
            int(channel),
            int(can_id, 16),
            ext == "1",
            fd == "1",
            brs == "1",
            esi == "1",
            remote == "1",
            tx == "1",
            bytes.fromhex("" if data == "-" else data),
        )


def line_out(t, channel, can_id, ext, fd, brs, esi, remote, tx, data):
    flags = " ".join(str(int(bool(f))) for f in (ext, fd, brs, esi, remote, tx))
    print(f"{t!r} {channel} {can_id:X} {flags} {bytes(data).hex() or '-'}")


def message(frame):
    import can

    t, channel, can_id, ext, fd, brs, esi, remote, tx, data = frame
    return can.Message(
        timestamp=t / 10**9,  # int / int: correctly rounded
        channel=channel - 1,
        arbitration_id=can_id,
        is_extended_id=ext,
        is_fd=fd,
        bitrate_switch=brs,
        error_state_indicator=esi,
        is_remote_frame=remote,
        is_rx=not tx,
        dlc=len(data) if not remote else 4,
        data=data,
    )


def read_blf(path):
    import can

    reader = can.BLFReader(path)
    print(f"start {reader.start_timestamp!r}")
    for m in reader:
        line_out(
            m.timestamp,
            m.channel + 1,
            m.arbitration_id,
            m.is_extended_id,
            m.is_fd,
            m.bitrate_switch,
            m.error_state_indicator,
            m.is_remote_frame,
            not m.is_rx,
            m.data,
        )


def write_can(path, kind):
    import can

    frames = list(frames_in())
    writer = can.BLFWriter(path) if kind == "blf" else can.ASCWriter(path)
    for frame in frames:
        writer.on_message_received(message(frame))
    writer.stop()


def read_mf4(path, dbc=None):
    from asammdf import MDF
    from asammdf.blocks import v4_constants as v4c

    mdf = MDF(path)
    print(f"start {mdf.header.start_time.timestamp()!r}")
    for index, group in enumerate(mdf.groups):
        if not group.channel_group.flags & v4c.FLAG_CG_BUS_EVENT:
            continue
        names = [ch.name for ch in group.channels]
        if "CAN_DataFrame" not in names:
            continue
        def get(member):
            return mdf.get(f"CAN_DataFrame.{member}", group=index)

        ids = get("ID")
        columns = [get(m).samples for m in ("BusChannel", "IDE", "EDL", "BRS", "ESI", "Dir", "DataLength")]
        data = get("DataBytes").samples
        for i, t in enumerate(ids.timestamps):
            bus, ide, edl, brs, esi, tx, length = (int(c[i]) for c in columns)
            line_out(float(t), bus, int(ids.samples[i]) & 0x1FFFFFFF, ide, edl, brs, esi, False, tx,
                     bytes(data[i][:length]))
    if dbc is not None:
        extracted = mdf.extract_bus_logging({"CAN": [(dbc, 0)]})
        for group_index, group in enumerate(extracted.groups):
            for channel_index, channel in enumerate(group.channels):
                if channel.channel_type in v4c.MASTER_TYPES:
                    continue
                signal = extracted.get(group=group_index, index=channel_index)
                if signal.samples.dtype.kind in "SUO":
                    # A value table's text: the raw value (their factor is 1, offset 0).
                    signal = extracted.get(group=group_index, index=channel_index, raw=True)
                for t, v in zip(signal.timestamps, signal.samples):
                    print(f"signal {channel.name} {float(t)!r} {float(v)!r}")


def write_mf4(path, start_ns, compression):
    from datetime import datetime, timezone

    import numpy as np
    from asammdf import MDF, Signal
    from asammdf.blocks import v4_constants as v4c
    from asammdf.blocks.source_utils import Source

    frames = list(frames_in())
    mdf = MDF(version="4.10")
    mdf.header.start_time = datetime.fromtimestamp(start_ns // 10**9, timezone.utc)
    source = Source(
        name="CAN", path="CAN", comment="", source_type=v4c.SOURCE_BUS, bus_type=v4c.BUS_TYPE_CAN
    )
    for fd_group, width in ((False, 8), (True, 64)):
        group = [f for f in frames if f[4] == fd_group]
        if not group:
            continue
        dtype = np.dtype(
            [
                ("CAN_DataFrame.BusChannel", "<u1"),
                ("CAN_DataFrame.ID", "<u4"),
                ("CAN_DataFrame.IDE", "<u1"),
                ("CAN_DataFrame.DLC", "<u1"),
                ("CAN_DataFrame.DataLength", "<u1"),
                ("CAN_DataFrame.DataBytes", "<u1", (width,)),
                ("CAN_DataFrame.Dir", "<u1"),
                ("CAN_DataFrame.EDL", "<u1"),
                ("CAN_DataFrame.BRS", "<u1"),
                ("CAN_DataFrame.ESI", "<u1"),
            ]
        )
        samples = np.zeros(len(group), dtype=dtype)
        lengths = [0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64]
        for i, (t, channel, can_id, ext, fd, brs, esi, remote, tx, data) in enumerate(group):
            samples[i]["CAN_DataFrame.BusChannel"] = channel
            samples[i]["CAN_DataFrame.ID"] = can_id
            samples[i]["CAN_DataFrame.IDE"] = ext
            samples[i]["CAN_DataFrame.DLC"] = lengths.index(len(data))
            samples[i]["CAN_DataFrame.DataLength"] = len(data)
            samples[i]["CAN_DataFrame.DataBytes"][: len(data)] = list(data)
            samples[i]["CAN_DataFrame.Dir"] = tx
            samples[i]["CAN_DataFrame.EDL"] = fd
            samples[i]["CAN_DataFrame.BRS"] = brs
            samples[i]["CAN_DataFrame.ESI"] = esi
        times = np.array([(f[0] - start_ns // 10**9 * 10**9) / 1e9 for f in group])
        mdf.append([Signal(samples, times, name="CAN_DataFrame", source=source)], acq_name="CAN")
    mdf.save(path, overwrite=True, compression=compression)


def write_mf4_vlsd(path, start_ns, kind):
    """One data group of unsorted records (1-byte ids): record id 1 is the
    CAN_DataFrame group (f64 time, then BusChannel u8, ID u32, IDE, DLC,
    DataLength, Dir, EDL, BRS, ESI u8, DataBytes as a u64 offset), record
    id 2 (kind cg) the VLSD group of its data bytes, each written before
    the record that points to it."""
    import struct

    frames = list(frames_in())
    lengths = [0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64]
    out = bytearray(b"MDF     4.10    amdf0000" + bytes(4) + struct.pack("<H", 410) + bytes(34))

    def block(tag, links, data):
        while len(out) % 8:
            out.append(0)
        at = len(out)
        out.extend(b"##" + tag + bytes(4) + struct.pack("<QQ", 24 + 8 * len(links) + len(data), len(links)))
        out.extend(struct.pack(f"<{len(links)}Q", *links))
        out.extend(data)
        return at

    def link(at, index, target):
        out[at + 24 + 8 * index : at + 32 + 8 * index] = struct.pack("<Q", target)

    def text(value):
        return block(b"TX", [], value.encode() + b"\0")

    def channel(name, kind_, sync, data_type, offset, bits):
        data = struct.pack("<BBBBIIIIBBH", kind_, sync, data_type, 0, offset, bits, 0, 0, 0, 0, 0) + bytes(48)
        return block(b"CN", [0, 0, text(name), 0, 0, 0, 0, 0], data)

    origin = start_ns // 10**9 * 10**9
    hd = block(b"HD", [0] * 6, struct.pack("<QhhBBBBdd", origin, 0, 0, 2, 0, 0, 0, 0.0, 0.0))
    dg = block(b"DG", [0, 0, 0, 0], bytes([1]) + bytes(7))
    link(hd, 0, dg)
    members = [
        ("BusChannel", 8, 8), ("ID", 9, 32), ("IDE", 13, 8), ("DLC", 14, 8), ("DataLength", 15, 8),
        ("Dir", 16, 8), ("EDL", 17, 8), ("BRS", 18, 8), ("ESI", 19, 8),
    ]
    time = channel("t", 2, 1, 4, 0, 64)
    structure = channel("CAN_DataFrame", 0, 0, 10, 8, 20 * 8)
    link(time, 0, structure)
    previous = None
    for name, offset, bits in members:
        cn = channel(f"CAN_DataFrame.{name}", 0, 0, 0, offset, bits)
        if previous is None:
            link(structure, 1, cn)
        else:
            link(previous, 0, cn)
        previous = cn
    data_bytes = channel("CAN_DataFrame.DataBytes", 1, 0, 10, 20, 64)
    link(previous, 0, data_bytes)
    cg = block(b"CG", [0, time, 0, 0, 0, 0], struct.pack("<QQHHIII", 1, len(frames), 0b110, ord("."), 0, 28, 0))
    link(dg, 1, cg)
    records = bytearray()
    signal = bytearray()
    for t, channel_, can_id, ext, fd, brs, esi, remote, tx, data in frames:
        offset = len(signal)
        signal += struct.pack("<I", len(data)) + data
        if kind == "cg":
            records += bytes([2]) + struct.pack("<I", len(data)) + data
        records += bytes([1]) + struct.pack(
            "<dBIBBBBBBBQ", (t - origin) / 1e9, channel_, can_id, ext, lengths.index(len(data)), len(data),
            tx, fd, brs, esi, offset,
        )
    if kind == "cg":
        vlsd = block(b"CG", [0, 0, 0, 0, 0, 0],
                     struct.pack("<QQHHIII", 2, len(frames), 1, 0, 0, len(signal) & 0xFFFFFFFF, len(signal) >> 32))
        link(cg, 0, vlsd)
        link(data_bytes, 5, vlsd)
    else:
        link(data_bytes, 5, block(b"SD", [], bytes(signal)))
    link(dg, 2, block(b"DT", [], bytes(records)))
    with open(path, "wb") as f:
        f.write(out)


def main():
    command, path, *rest = sys.argv[1:]
    if command == "read-blf":
        read_blf(path)
    elif command == "read-mf4":
        read_mf4(path, *rest)
    elif command in ("write-blf", "write-asc"):
        write_can(path, command[6:])
    elif command == "write-mf4-vlsd":
        write_mf4_vlsd(path, int(rest[0]), rest[1])
    elif command == "write-mf4":
        write_mf4(path, int(rest[0]), int(rest[1]) if len(rest) > 1 else 0)
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main()
