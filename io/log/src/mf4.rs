//! ASAM MDF 4.1 bus logging (`.mf4`), as asammdf, CANape and CANoe read it:
//! one data group of unsorted records (a 1-byte record id before each)
//! with three channel groups, all bus events of a CAN source: classic data
//! frames (`CAN_DataFrame`, 8 data bytes), CAN FD data frames
//! (`CAN_DataFrame`, 64 data bytes) and remote frames (`CAN_RemoteFrame`).
//! Each record holds the time master channel `t` (f64 seconds from the
//! header's start time) and the structure channel with the standard
//! members `.BusChannel`, `.ID` (29 bits), `.IDE`, `.DLC`, `.DataLength`,
//! `.Dir` (1 = sent), `.EDL`, `.BRS`, `.ESI` and `.DataBytes` (DataLength
//! of them valid), one byte each but the identifier (4) and the data.
//!
//! The metadata is written once; the single data block grows at the end
//! of the file, and [`LogWriter::flush`] rewrites its length and the
//! groups' record counts, so that a file flushed last is complete.

use std::io::{self, Seek, SeekFrom, Write};

use super::{ChannelNumbers, Direction, Entry, LogWriter};
use tandem_can::frame::{FrameKind, FD_MAX_LEN};

/// The record layout: byte offsets after the record id.
pub(super) mod layout {
    /// The time, f64 seconds.
    pub const TIME: usize = 0;
    /// Where the structure channel starts.
    pub const FRAME: usize = 8;
    /// The bytes of every record before the data bytes.
    pub const FIXED: usize = 20;
    /// The members of the structure channel: name, byte offset, bits.
    pub const MEMBERS: [(&str, usize, u32); 9] = [
        ("BusChannel", 8, 8),
        ("ID", 9, 32),
        ("IDE", 13, 8),
        ("DLC", 14, 8),
        ("DataLength", 15, 8),
        ("Dir", 16, 8),
        ("EDL", 17, 8),
        ("BRS", 18, 8),
        ("ESI", 19, 8),
    ];
}

/// The channel groups: record id, structure name, data bytes.
const GROUPS: [(u8, &str, usize); 3] = [
    (1, "CAN_DataFrame", 8),
    (2, "CAN_DataFrame", FD_MAX_LEN),
    (3, "CAN_RemoteFrame", 0),
];

/// The largest distance (ns) of frames from the start time for which f64
/// seconds hold every nanosecond (a day: 2^-36 s resolution).
pub const MAX_OFFSET_NS: i64 = 86_400_000_000_000;
/// Where the header block's start time is: after the 64-byte identification
/// block, the header's 24 bytes and 6 links.
const HD_START: u64 = 64 + 24 + 6 * 8;

/// MDF data types.
const UINT_LE: u8 = 0;
const FLOAT_LE: u8 = 4;
const BYTE_ARRAY: u8 = 10;
/// Channel group flags: bus event, plain bus event.
const CG_BUS_EVENT: u16 = 0b110;
/// Channel flag: bus event.
const CN_BUS_EVENT: u32 = 1 << 10;

/// Writes frames as MDF4 bus logging. Channels (`BusChannel`) are
/// numbered from 1 in the order their interfaces are declared or first
/// appear.
pub struct Mf4Writer<W: Write + Seek> {
    out: W,
    start_ns: i64,
    /// The header's start time (ns), set by the first frame.
    origin_ns: Option<i64>,
    channels: ChannelNumbers,
    /// Where the file history's time is.
    fh_start: u64,
    /// Where the groups' record counts are, and the counts.
    cycle_counts: [(u64, u64); 3],
    /// Where the data block is, and its data bytes so far.
    data_block: u64,
    data_len: u64,
}

impl<W: Write + Seek> Mf4Writer<W> {
    /// A writer into `out` whose times count from `start_ns` (ns since the
    /// Unix epoch, or from a virtual clock's 0), or from the first frame's
    /// whole second when that is more than `MAX_OFFSET_NS` away (so that
    /// the f64 seconds keep every nanosecond); writes the metadata at once.
    pub fn new(mut out: W, start_ns: i64) -> io::Result<Self> {
        let origin_ns = start_ns.max(0);
        let mut b = Blocks::new();
        let hd = b.add(b"HD", 6, &{
            let mut d = [0u8; 32];
            d[0..8].copy_from_slice(&(origin_ns as u64).to_le_bytes());
            d
        });
        let fh_comment = b.text(
            b"MD",
            &format!(
                "<FHcomment><TX>bus log</TX><tool_id>Tandem</tool_id><tool_vendor>Tandem</tool_vendor>\
                 <tool_version>{}</tool_version></FHcomment>",
                env!("CARGO_PKG_VERSION")
            ),
        );
        let fh = b.add(b"FH", 2, &{
            let mut d = [0u8; 16];
            d[0..8].copy_from_slice(&(origin_ns as u64).to_le_bytes());
            d
        });
        b.link(fh, 1, fh_comment);
        b.link(hd, 1, fh);
        debug_assert_eq!(hd + 24 + 6 * 8, HD_START);
        let dg = b.add(b"DG", 4, &[1, 0, 0, 0, 0, 0, 0, 0]);
        b.link(hd, 0, dg);
        let source_name = b.text(b"TX", "CAN");
        let source_path = b.text(b"TX", "Tandem");
        let source = b.add(b"SI", 3, &[2, 2, 0, 0, 0, 0, 0, 0]);
        b.link(source, 0, source_name);
        b.link(source, 1, source_path);
        let mut cycle_counts = [(0, 0); 3];
        let mut previous_group = None;
        for (slot, (record_id, name, data_bytes)) in cycle_counts.iter_mut().zip(GROUPS) {
            let mut d = [0u8; 32];
            d[0..8].copy_from_slice(&u64::from(record_id).to_le_bytes());
            d[16..18].copy_from_slice(&CG_BUS_EVENT.to_le_bytes());
            d[18..20].copy_from_slice(&u16::from(b'.').to_le_bytes());
            d[24..28].copy_from_slice(&((layout::FIXED + data_bytes) as u32).to_le_bytes());
            let cg = b.add(b"CG", 6, &d);
            *slot = (cg + 24 + 6 * 8 + 8, 0);
            match previous_group {
                None => b.link(dg, 1, cg),
                Some(previous) => b.link(previous, 0, cg),
            }
            previous_group = Some(cg);
            let acquisition = b.text(b"TX", "CAN");
            b.link(cg, 2, acquisition);
            b.link(cg, 3, source);
            let time = b.channel("t", 2, 1, FLOAT_LE, layout::TIME, 64, 0);
            let unit = b.text(b"TX", "s");
            b.link(time, 6, unit);
            b.link(cg, 1, time);
            let bits = ((layout::FIXED - layout::FRAME + data_bytes) * 8) as u32;
            let frame = b.channel(name, 0, 0, BYTE_ARRAY, layout::FRAME, bits, CN_BUS_EVENT);
            b.link(frame, 3, source);
            b.link(time, 0, frame);
            let mut previous_member = None;
            let data = (data_bytes > 0).then_some(("DataBytes", layout::FIXED, (data_bytes * 8) as u32));
            for (member, offset, bits) in layout::MEMBERS.into_iter().chain(data) {
                let data_type = if member == "DataBytes" { BYTE_ARRAY } else { UINT_LE };
                let cn = b.channel(&format!("{name}.{member}"), 0, 0, data_type, offset, bits, CN_BUS_EVENT);
                match previous_member {
                    None => b.link(frame, 1, cn),
                    Some(previous) => b.link(previous, 0, cn),
                }
                previous_member = Some(cn);
            }
        }
        let data_block = b.add(b"DT", 0, &[]);
        b.link(dg, 2, data_block);
        out.write_all(&b.bytes)?;
        Ok(Mf4Writer {
            out,
            start_ns: origin_ns,
            origin_ns: None,
            channels: ChannelNumbers::default(),
            fh_start: fh + 24 + 2 * 8,
            cycle_counts,
            data_block,
            data_len: 0,
        })
    }
}

impl<W: Write + Seek + Send> LogWriter for Mf4Writer<W> {
    fn declare(&mut self, interface: &str) -> io::Result<()> {
        self.channels.byte_of(interface).map(drop)
    }

    fn write_entry(&mut self, r: &Entry<'_>) -> io::Result<()> {
        let channel = self.channels.byte_of(r.interface)?;
        let (group, fd, brs, esi) = match r.frame.kind() {
            FrameKind::Data => (0, false, false, false),
            FrameKind::Fd { brs, esi } => (1, true, brs, esi),
            FrameKind::Remote => (2, false, false, false),
        };
        let mut record = [0u8; 1 + layout::FIXED + FD_MAX_LEN];
        record[0] = GROUPS[group].0;
        let body = &mut record[1..];
        let origin_ns = match self.origin_ns {
            Some(origin) => origin,
            None => {
                let origin = if (r.time_ns - self.start_ns).abs() <= MAX_OFFSET_NS {
                    self.start_ns
                } else {
                    r.time_ns.max(0) / 1_000_000_000 * 1_000_000_000
                };
                if origin != self.start_ns {
                    // The header's and the file history's start times.
                    for at in [HD_START, self.fh_start] {
                        self.out.seek(SeekFrom::Start(at))?;
                        self.out.write_all(&(origin as u64).to_le_bytes())?;
                    }
                    self.out.seek(SeekFrom::End(0))?;
                }
                *self.origin_ns.insert(origin)
            }
        };
        let seconds = (r.time_ns - origin_ns) as f64 * 1e-9;
        body[layout::TIME..layout::TIME + 8].copy_from_slice(&seconds.to_le_bytes());
        let id = r.frame.id();
        body[8] = channel;
        body[9..13].copy_from_slice(&id.raw().to_le_bytes());
        body[13] = u8::from(id.is_extended());
        body[14] = r.frame.dlc();
        body[15] = r.frame.len() as u8;
        body[16] = u8::from(r.direction == Direction::Tx);
        body[17] = u8::from(fd);
        body[18] = u8::from(brs);
        body[19] = u8::from(esi);
        body[layout::FIXED..layout::FIXED + r.frame.payload().len()].copy_from_slice(r.frame.payload());
        let size = 1 + layout::FIXED + GROUPS[group].2;
        self.out.write_all(&record[..size])?;
        self.data_len += size as u64;
        self.cycle_counts[group].1 += 1;
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        for (at, count) in self.cycle_counts {
            self.out.seek(SeekFrom::Start(at))?;
            self.out.write_all(&count.to_le_bytes())?;
        }
        self.out.seek(SeekFrom::Start(self.data_block + 8))?;
        self.out.write_all(&(24 + self.data_len).to_le_bytes())?;
        self.out.seek(SeekFrom::End(0))?;
        self.out.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.flush()
    }
}

/// MDF blocks laid out one after the other, 8-byte aligned, after the
/// 64-byte identification block.
struct Blocks {
    bytes: Vec<u8>,
}

impl Blocks {
    fn new() -> Self {
        let mut bytes = Vec::with_capacity(16 * 1024);
        bytes.extend_from_slice(b"MDF     4.10    Tandem  ");
        bytes.extend_from_slice(&[0; 4]);
        bytes.extend_from_slice(&410u16.to_le_bytes());
        bytes.resize(64, 0);
        Blocks { bytes }
    }

    /// Appends a block with `links` null links and `data`; its address.
    fn add(&mut self, id: &[u8; 2], links: usize, data: &[u8]) -> u64 {
        let at = self.bytes.len() as u64;
        self.bytes.extend_from_slice(b"##");
        self.bytes.extend_from_slice(id);
        self.bytes.extend_from_slice(&[0; 4]);
        self.bytes
            .extend_from_slice(&((24 + 8 * links + data.len()) as u64).to_le_bytes());
        self.bytes.extend_from_slice(&(links as u64).to_le_bytes());
        self.bytes.resize(self.bytes.len() + 8 * links, 0);
        self.bytes.extend_from_slice(data);
        self.bytes.resize(self.bytes.len().next_multiple_of(8), 0);
        at
    }

    /// Sets link `index` of the block at `block` to `target`.
    fn link(&mut self, block: u64, index: usize, target: u64) {
        let at = block as usize + 24 + 8 * index;
        self.bytes[at..at + 8].copy_from_slice(&target.to_le_bytes());
    }

    /// A TX or MD block of `text`, zero-terminated.
    fn text(&mut self, id: &[u8; 2], text: &str) -> u64 {
        let mut data = text.as_bytes().to_vec();
        data.push(0);
        data.resize(data.len().next_multiple_of(8), 0);
        self.add(id, 0, &data)
    }

    /// A channel block named `name`.
    #[expect(
        clippy::too_many_arguments,
        reason = "the fields of an MF4 channel block (CN), in the order the standard lists them"
    )]
    fn channel(&mut self, name: &str, kind: u8, sync: u8, data_type: u8, offset: usize, bits: u32, flags: u32) -> u64 {
        let name = self.text(b"TX", name);
        let mut d = [0u8; 72];
        d[0] = kind;
        d[1] = sync;
        d[2] = data_type;
        d[4..8].copy_from_slice(&(offset as u32).to_le_bytes());
        d[8..12].copy_from_slice(&bits.to_le_bytes());
        d[12..16].copy_from_slice(&flags.to_le_bytes());
        let cn = self.add(b"CN", 8, &d);
        self.link(cn, 2, name);
        cn
    }
}
