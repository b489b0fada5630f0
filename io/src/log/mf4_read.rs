//! Reads CAN frames from ASAM MDF 4 bus logging files: every channel group
//! with a `CAN_DataFrame` (or `CAN_RemoteFrame`) structure channel and a
//! time master channel, in sorted files (a data group per channel group,
//! as asammdf writes them) and unsorted ones (record ids, as Tandem's
//! writer and loggers write them), with data in DT blocks, DL lists of
//! them (HL-wrapped or not) and zlib-compressed DZ blocks. Data groups are
//! read side by side and merged in time order.
//!
//! The structure members read are `.BusChannel`, `.ID`, `.IDE` (else bit
//! 31 of the identifier), `.DLC`, `.DataLength`, `.Dir`, `.EDL`, `.BRS`,
//! `.ESI` and `.DataBytes` (fixed-length: a variable-length, VLSD, data
//! field is refused with an error), as unsigned integers of any bit
//! position and byte order.
//!
//! A damaged file gets an error naming the byte offset of the block at
//! fault, and allocates at most what its bounds allow: 1 MiB per metadata
//! block, 16 MiB per data list, 64 MiB per DZ block (zipped and
//! unzipped), 1 MiB per record, 64 KiB chunks of plain data.

use std::fs::File;
use std::io;

use flate2::{Decompress, FlushDecompress, Status};

use super::{ChannelNames, Direction, Entry, LogError, LogRecord, Place};
use crate::frame::{CanFrame, CanId, FD_LENGTHS, FD_MAX_LEN};

/// Reading at an offset, without a cursor: files, and bytes in memory.
pub trait ReadAt {
    /// Reads into `buf` from `offset`; how many bytes came (0 at the end).
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;
}

impl ReadAt for File {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(self, buf, offset)
    }
}

impl ReadAt for [u8] {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let start = usize::try_from(offset).unwrap_or(usize::MAX).min(self.len());
        let n = buf.len().min(self.len() - start);
        buf[..n].copy_from_slice(&self[start..start + n]);
        Ok(n)
    }
}

impl<T: ReadAt + ?Sized> ReadAt for &T {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        (**self).read_at(buf, offset)
    }
}

/// The largest metadata block read (bytes).
const MAX_META_BLOCK: u64 = 1 << 20;
/// The largest DL block read (bytes: 2 million data blocks).
const MAX_LIST_BLOCK: u64 = 16 << 20;
/// The largest uncompressed DZ block accepted.
pub const MAX_DZ: u64 = 64 << 20;
/// The longest fixed-length record accepted (bytes; a CAN frame's is
/// under 100).
const MAX_RECORD: usize = 1 << 20;
/// The most blocks followed along any chain (groups, channels, lists).
const MAX_CHAIN: usize = 100_000;
/// How much of a data block is read at once.
const CHUNK: usize = 1 << 16;

/// What is wrong, and where (a byte offset).
type Problem = (u64, String);

/// A block's header and links.
struct Block {
    length: u64,
    links: Vec<u64>,
    /// Where its data starts.
    data_at: u64,
}

/// An unsigned integer member of a record: where and how wide.
#[derive(Clone, Copy, Debug)]
struct Field {
    byte: usize,
    bit: u32,
    bits: u32,
    big_endian: bool,
}

impl Field {
    /// Its value in `record`.
    #[inline]
    fn read(&self, record: &[u8]) -> u64 {
        // Whole little-endian bytes, as bus logs store their members.
        if self.bit == 0 && !self.big_endian {
            let at = self.byte;
            match self.bits {
                8 => return u64::from(record[at]),
                16 => return u64::from(u16::from_le_bytes([record[at], record[at + 1]])),
                32 => {
                    return u64::from(u32::from_le_bytes([
                        record[at],
                        record[at + 1],
                        record[at + 2],
                        record[at + 3],
                    ]))
                }
                _ => {}
            }
        }
        let bytes = (self.bit + self.bits).div_ceil(8) as usize;
        let raw = &record[self.byte..self.byte + bytes];
        let mut value: u128 = 0;
        if self.big_endian {
            for &b in raw {
                value = value << 8 | u128::from(b);
            }
        } else {
            for &b in raw.iter().rev() {
                value = value << 8 | u128::from(b);
            }
        }
        let value = value >> self.bit;
        (value & ((1u128 << self.bits) - 1)) as u64
    }
}

/// How a channel group's records hold a CAN frame.
#[derive(Clone, Debug)]
struct CanLayout {
    remote: bool,
    /// The time master: byte offset and whether it is f32 (else f64).
    time: (usize, bool),
    bus: Option<Field>,
    id: Field,
    ide: Option<Field>,
    dlc: Option<Field>,
    length: Option<Field>,
    dir: Option<Field>,
    edl: Option<Field>,
    brs: Option<Field>,
    esi: Option<Field>,
    /// Byte offset and count of the data bytes.
    data: Option<(usize, usize)>,
}

/// A channel group's records in its data group's stream.
#[derive(Clone, Debug)]
struct Group {
    record_id: u64,
    /// Record bytes after the record id, or `None` for variable-length
    /// (VLSD) records, which carry their length.
    size: Option<usize>,
    can: Option<CanLayout>,
}

/// A part of a data group's data.
#[derive(Clone, Copy, Debug)]
enum Fragment {
    /// Raw records: file offset and length.
    Plain(u64, u64),
    /// A DZ block: its address.
    Zipped(u64),
}

/// A frame read from a record.
#[derive(Clone, Copy, Debug)]
struct Found {
    time_ns: i64,
    channel: u16,
    frame: CanFrame,
    direction: Direction,
}

/// A data group's records, read in order.
struct Stream {
    record_id_size: usize,
    groups: Vec<Group>,
    fragments: Vec<Fragment>,
    next_fragment: usize,
    /// Within the current plain fragment: next offset and bytes left.
    plain: (u64, u64),
    buf: Vec<u8>,
    pos: usize,
    /// Where the record being read started (approximately, for errors).
    at: u64,
    peeked: Option<Found>,
}

/// Reads CAN frames from an MDF4 file.
pub struct Mf4Reader<R> {
    input: R,
    file: String,
    start_ns: i64,
    streams: Vec<Stream>,
    inflate: Decompress,
    zipped: Vec<u8>,
    names: ChannelNames,
    /// Where the last frame or problem was.
    at: u64,
}

impl<R: ReadAt> Mf4Reader<R> {
    /// A reader of `input`, named `file` in errors; reads the file's
    /// structure (no data yet).
    pub fn new(input: R, file: &str) -> Result<Self, LogError> {
        let error = |(offset, message): Problem| LogError {
            file: file.to_owned(),
            place: Place::Offset(offset),
            message,
        };
        let mut id = [0u8; 64];
        if read_fully(&input, &mut id, 0).map_err(|e| error((0, e)))? < 64 || &id[0..3] != b"MDF" {
            return Err(error((
                0,
                "the file does not start with an MDF identification block (`MDF     `); check that this is an MF4 \
                 file"
                    .into(),
            )));
        }
        let version = u16::from_le_bytes([id[28], id[29]]);
        if version < 400 {
            return Err(error((
                28,
                format!("this is MDF version {version}; only MDF 4 files are read (convert it with asammdf)"),
            )));
        }
        let hd = read_block(&input, 64, b"##HD", MAX_META_BLOCK).map_err(error)?;
        let mut start = [0u8; 8];
        read_exact_at(&input, &mut start, hd.data_at).map_err(error)?;
        let start_ns = i64::try_from(u64::from_le_bytes(start))
            .map_err(|_| error((hd.data_at, "the start time is beyond the year 2262".into())))?;
        let mut streams = Vec::new();
        let mut dg_at = hd.links.first().copied().unwrap_or(0);
        let mut seen = 0;
        while dg_at != 0 {
            seen += 1;
            if seen > MAX_CHAIN {
                return Err(error((dg_at, format!("more than {MAX_CHAIN} data groups (a loop?)"))));
            }
            let dg = read_block(&input, dg_at, b"##DG", MAX_META_BLOCK).map_err(error)?;
            if dg.links.len() < 3 {
                return Err(error((dg_at, "the data group block has fewer than 3 links".into())));
            }
            let mut rec_id = [0u8; 1];
            read_exact_at(&input, &mut rec_id, dg.data_at).map_err(error)?;
            let record_id_size = usize::from(rec_id[0]);
            if ![0, 1, 2, 4, 8].contains(&record_id_size) {
                return Err(error((
                    dg.data_at,
                    format!("record id size {record_id_size} is not 0, 1, 2, 4 or 8"),
                )));
            }
            let groups = read_groups(&input, dg.links[1]).map_err(error)?;
            if groups.iter().any(|g| g.can.is_some()) {
                if record_id_size == 0 && groups.len() > 1 {
                    return Err(error((
                        dg_at,
                        "a data group of several channel groups has no record ids".into(),
                    )));
                }
                let mut fragments = Vec::new();
                data_fragments(&input, dg.links[2], &mut fragments, 0).map_err(error)?;
                streams.push(Stream {
                    record_id_size,
                    groups,
                    fragments,
                    next_fragment: 0,
                    plain: (0, 0),
                    buf: Vec::new(),
                    pos: 0,
                    at: dg_at,
                    peeked: None,
                });
            }
            dg_at = dg.links[0];
        }
        Ok(Mf4Reader {
            input,
            file: file.to_owned(),
            start_ns,
            streams,
            inflate: Decompress::new(true),
            zipped: Vec::new(),
            names: ChannelNames::default(),
            at: 0,
        })
    }

    /// The next frame in time order, its interface the bus channel number;
    /// `None` at the end of the file.
    pub fn next_entry(&mut self) -> Option<Result<Entry<'_>, LogError>> {
        for i in 0..self.streams.len() {
            if self.streams[i].peeked.is_none() {
                match self.read_frame(i) {
                    Ok(found) => self.streams[i].peeked = found,
                    Err((at, message)) => {
                        self.at = at;
                        return Some(Err(self.error(message)));
                    }
                }
            }
        }
        let (i, _) = self
            .streams
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.peeked.map(|f| (i, f.time_ns)))
            .min_by_key(|&(i, t)| (t, i))?;
        let found = self.streams[i].peeked.take()?;
        self.at = self.streams[i].at;
        Some(Ok(Entry {
            time_ns: found.time_ns,
            interface: self.names.get(found.channel),
            frame: found.frame,
            direction: found.direction,
        }))
    }

    /// The next frame of stream `i`, or `None` at its end.
    fn read_frame(&mut self, i: usize) -> Result<Option<Found>, Problem> {
        loop {
            let id_size = self.streams[i].record_id_size;
            if !self.fill(i, id_size.max(1))? {
                return Ok(None);
            }
            let stream = &mut self.streams[i];
            let record_id = if id_size == 0 {
                stream.groups[0].record_id
            } else {
                let mut bytes = [0u8; 8];
                bytes[..id_size].copy_from_slice(&stream.buf[stream.pos..stream.pos + id_size]);
                u64::from_le_bytes(bytes)
            };
            let Some(g) = stream.groups.iter().position(|g| g.record_id == record_id) else {
                return Err((
                    stream.at,
                    format!("a record has id {record_id}, which no channel group of its data group has; the file is damaged"),
                ));
            };
            let size = match stream.groups[g].size {
                Some(size) => size,
                None => {
                    if !self.fill(i, id_size + 4)? {
                        return Err((
                            self.streams[i].at,
                            "the data ends inside a record: it is truncated".into(),
                        ));
                    }
                    let s = &self.streams[i];
                    let at = s.pos + id_size;
                    let len = u32::from_le_bytes([s.buf[at], s.buf[at + 1], s.buf[at + 2], s.buf[at + 3]]);
                    // Skipped in chunks: a variable-length record may be long.
                    let mut left = u64::from(len);
                    self.streams[i].pos += id_size + 4;
                    while left > 0 {
                        let take = left.min(CHUNK as u64) as usize;
                        if !self.fill(i, take)? {
                            return Err((
                                self.streams[i].at,
                                "the data ends inside a record: it is truncated".into(),
                            ));
                        }
                        self.streams[i].pos += take;
                        left -= take as u64;
                    }
                    continue;
                }
            };
            if !self.fill(i, id_size + size)? {
                return Err((
                    self.streams[i].at,
                    "the data ends inside a record: it is truncated".into(),
                ));
            }
            let stream = &mut self.streams[i];
            let record = &stream.buf[stream.pos + id_size..stream.pos + id_size + size];
            stream.pos += id_size + size;
            let Some(layout) = &stream.groups[g].can else {
                continue;
            };
            return decode(layout, record, self.start_ns)
                .map(Some)
                .map_err(|message| (stream.at, message));
        }
    }

    /// Makes at least `n` bytes of stream `i` available at its position;
    /// `false` when the data ends first (with none left: at a record's
    /// start; else the caller's error).
    fn fill(&mut self, i: usize, n: usize) -> Result<bool, Problem> {
        loop {
            let stream = &mut self.streams[i];
            if stream.buf.len() - stream.pos >= n {
                return Ok(true);
            }
            stream.buf.drain(..stream.pos);
            stream.pos = 0;
            if stream.plain.1 > 0 {
                let (offset, left) = stream.plain;
                let take = left.min(CHUNK.max(n) as u64) as usize;
                let before = stream.buf.len();
                stream.buf.resize(before + take, 0);
                stream.at = offset;
                let got = read_fully(&self.input, &mut stream.buf[before..], offset).map_err(|e| (offset, e))?;
                if got < take {
                    return Err((offset, "the file ends inside a data block: it is truncated".into()));
                }
                stream.plain = (offset + take as u64, left - take as u64);
                continue;
            }
            let Some(&fragment) = stream.fragments.get(stream.next_fragment) else {
                if stream.buf.is_empty() {
                    return Ok(false);
                }
                return Err((stream.at, "the data ends inside a record: it is truncated".into()));
            };
            stream.next_fragment += 1;
            match fragment {
                Fragment::Plain(offset, len) => stream.plain = (offset, len),
                Fragment::Zipped(at) => {
                    stream.at = at;
                    unzip(&self.input, at, &mut self.inflate, &mut self.zipped, &mut stream.buf)?;
                }
            }
        }
    }
}

impl<R> Mf4Reader<R> {
    /// An error at the frame or problem read last, saying `message`.
    pub fn error(&self, message: String) -> LogError {
        LogError {
            file: self.file.clone(),
            place: Place::Offset(self.at),
            message,
        }
    }
}

impl<R: ReadAt> Iterator for Mf4Reader<R> {
    type Item = Result<LogRecord, LogError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_entry().map(|entry| entry.map(Entry::to_record))
    }
}

/// The frame in `record`.
fn decode(layout: &CanLayout, record: &[u8], start_ns: i64) -> Result<Found, String> {
    let (at, single) = layout.time;
    let seconds = if single {
        f64::from(f32::from_le_bytes([
            record[at],
            record[at + 1],
            record[at + 2],
            record[at + 3],
        ]))
    } else {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&record[at..at + 8]);
        f64::from_le_bytes(bytes)
    };
    let offset_ns = (seconds * 1e9).round();
    if !offset_ns.is_finite() || offset_ns.abs() > 9.0e18 {
        return Err(format!("a frame's time ({seconds} s) is not a time in range"));
    }
    let time_ns = start_ns
        .checked_add(offset_ns as i64)
        .ok_or_else(|| format!("a frame's time ({seconds} s) is beyond the year 2262"))?;
    let get = |field: Option<Field>| field.map_or(0, |f| f.read(record));
    let raw_id = layout.id.read(record);
    let extended = match layout.ide {
        Some(ide) => ide.read(record) != 0,
        None => raw_id & 0x8000_0000 != 0,
    };
    let raw = (raw_id & 0x1FFF_FFFF) as u32;
    let id = CanId::new(raw, extended).map_err(|e| format!("a frame's {e}"))?;
    let dlc = get(layout.dlc);
    let fd = get(layout.edl) != 0;
    let length = match layout.length {
        Some(field) => field.read(record) as usize,
        None if dlc < 16 => {
            let len = FD_LENGTHS[dlc as usize];
            if fd {
                len
            } else {
                len.min(8)
            }
        }
        None => return Err(format!("a frame's DLC {dlc} is not 0 to 15")),
    };
    let mut buf = [0u8; FD_MAX_LEN];
    if let Some((at, count)) = layout.data {
        if length > count.min(FD_MAX_LEN) && !layout.remote {
            return Err(format!("a frame's data length {length} exceeds its {count} data bytes"));
        }
        let n = length.min(count).min(FD_MAX_LEN);
        buf[..n].copy_from_slice(&record[at..at + n]);
    }
    let frame = if layout.remote {
        CanFrame::remote(id, length)
    } else if fd {
        CanFrame::fd(
            id,
            &buf[..length.min(FD_MAX_LEN)],
            get(layout.brs) != 0,
            get(layout.esi) != 0,
        )
    } else {
        CanFrame::data(id, &buf[..length.min(FD_MAX_LEN)])
    }
    .map_err(|e| format!("a frame: {e}"))?;
    Ok(Found {
        time_ns,
        channel: u16::try_from(get(layout.bus)).unwrap_or(u16::MAX),
        frame,
        direction: if get(layout.dir) != 0 {
            Direction::Tx
        } else {
            Direction::Rx
        },
    })
}

/// Reads until `buf` is full or the input ends; how many bytes came.
fn read_fully(input: &impl ReadAt, buf: &mut [u8], offset: u64) -> Result<usize, String> {
    let mut got = 0;
    while got < buf.len() {
        match input.read_at(&mut buf[got..], offset + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("cannot read: {e}")),
        }
    }
    Ok(got)
}

/// Fills `buf` from `offset`, or says the file is truncated there.
fn read_exact_at(input: &impl ReadAt, buf: &mut [u8], offset: u64) -> Result<(), Problem> {
    if read_fully(input, buf, offset).map_err(|e| (offset, e))? < buf.len() {
        return Err((offset, "the file ends inside a block: it is truncated".into()));
    }
    Ok(())
}

/// The block at `at`, which must be of kind `id` (`##` and two letters;
/// `##D?` accepts any data block), at most `max` bytes long.
fn read_block(input: &impl ReadAt, at: u64, id: &[u8; 4], max: u64) -> Result<Block, Problem> {
    if !at.is_multiple_of(8) {
        return Err((
            at,
            format!("a link points to byte {at}, not 8-byte aligned; the file is damaged"),
        ));
    }
    let mut header = [0u8; 24];
    read_exact_at(input, &mut header, at)?;
    let kind = [header[0], header[1], header[2], header[3]];
    if kind != *id && !(id == b"##D?" && kind.starts_with(b"##D")) {
        return Err((
            at,
            format!(
                "expected a {} block here, found {:?}; the file is damaged",
                String::from_utf8_lossy(&id[2..]),
                String::from_utf8_lossy(&kind)
            ),
        ));
    }
    let length = u64::from_le_bytes(header[8..16].try_into().unwrap_or_default());
    let links = u64::from_le_bytes(header[16..24].try_into().unwrap_or_default());
    if length > max || links > MAX_LIST_BLOCK / 8 || links.saturating_mul(8).saturating_add(24) > length {
        return Err((
            at,
            format!(
                "the {} block declares {length} bytes with {links} links (at most {max} bytes); the file is damaged",
                String::from_utf8_lossy(&kind[2..])
            ),
        ));
    }
    let mut raw = vec![0u8; links as usize * 8];
    read_exact_at(input, &mut raw, at + 24)?;
    Ok(Block {
        length,
        links: raw
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect(),
        data_at: at + 24 + links * 8,
    })
}

/// The block's data bytes, at most `n`.
fn block_data(input: &impl ReadAt, block: &Block, n: usize) -> Result<Vec<u8>, Problem> {
    let len = (block.length - (block.data_at - block_start(block))).min(n as u64) as usize;
    let mut data = vec![0u8; len];
    read_exact_at(input, &mut data, block.data_at)?;
    Ok(data)
}

/// Where a block starts.
fn block_start(block: &Block) -> u64 {
    block.data_at - 24 - 8 * block.links.len() as u64
}

/// The text of the TX block at `at` (empty for none).
fn read_text(input: &impl ReadAt, at: u64) -> Result<String, Problem> {
    if at == 0 {
        return Ok(String::new());
    }
    let block = read_block(input, at, b"##TX", MAX_META_BLOCK)?;
    let data = block_data(input, &block, 4096)?;
    let end = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    Ok(String::from_utf8_lossy(&data[..end]).into_owned())
}

/// A channel's name and, for the ones read, its place in the record.
struct Channel {
    name: String,
    kind: u8,
    sync: u8,
    data_type: u8,
    field: Field,
    composition: u64,
    next: u64,
    at: u64,
}

fn read_channel(input: &impl ReadAt, at: u64) -> Result<Channel, Problem> {
    let block = read_block(input, at, b"##CN", MAX_META_BLOCK)?;
    if block.links.len() < 8 {
        return Err((at, "the channel block has fewer than 8 links".into()));
    }
    let data = block_data(input, &block, 72)?;
    if data.len() < 16 {
        return Err((at, "the channel block is too short".into()));
    }
    let name = read_text(input, block.links[2])?;
    let data_type = data[2];
    Ok(Channel {
        name,
        kind: data[0],
        sync: data[1],
        data_type,
        field: Field {
            byte: u32::from_le_bytes(data[4..8].try_into().unwrap_or_default()) as usize,
            bit: u32::from(data[3]),
            bits: u32::from_le_bytes(data[8..12].try_into().unwrap_or_default()),
            big_endian: data_type == 1,
        },
        composition: block.links[1],
        next: block.links[0],
        at,
    })
}

/// The channels of the chain starting at `at`.
fn read_channels(input: &impl ReadAt, mut at: u64) -> Result<Vec<Channel>, Problem> {
    let mut channels = Vec::new();
    while at != 0 {
        if channels.len() >= MAX_CHAIN {
            return Err((at, format!("more than {MAX_CHAIN} channels in a group (a loop?)")));
        }
        let channel = read_channel(input, at)?;
        at = channel.next;
        channels.push(channel);
    }
    Ok(channels)
}

/// The channel groups of the chain starting at `at`.
fn read_groups(input: &impl ReadAt, mut at: u64) -> Result<Vec<Group>, Problem> {
    let mut groups = Vec::new();
    while at != 0 {
        if groups.len() >= MAX_CHAIN {
            return Err((at, format!("more than {MAX_CHAIN} channel groups (a loop?)")));
        }
        let block = read_block(input, at, b"##CG", MAX_META_BLOCK)?;
        if block.links.len() < 2 {
            return Err((at, "the channel group block has fewer than 2 links".into()));
        }
        let data = block_data(input, &block, 32)?;
        if data.len() < 32 {
            return Err((at, "the channel group block is too short".into()));
        }
        let word = |i: usize| u64::from_le_bytes(data[i..i + 8].try_into().unwrap_or_default());
        let flags = u16::from_le_bytes([data[16], data[17]]);
        let size = u32::from_le_bytes(data[24..28].try_into().unwrap_or_default()) as usize
            + u32::from_le_bytes(data[28..32].try_into().unwrap_or_default()) as usize;
        let vlsd = flags & 1 != 0;
        if size > MAX_RECORD {
            return Err((
                at,
                format!("the channel group's records have {size} bytes, more than {MAX_RECORD}"),
            ));
        }
        let can = if vlsd {
            None
        } else {
            can_layout(input, block.links[1], size, at)?
        };
        groups.push(Group {
            record_id: word(0),
            size: (!vlsd).then_some(size),
            can,
        });
        at = block.links[0];
    }
    Ok(groups)
}

/// How the group whose channels start at `first` holds CAN frames in
/// records of `size` bytes, or `None` when it holds none.
fn can_layout(input: &impl ReadAt, first: u64, size: usize, group_at: u64) -> Result<Option<CanLayout>, Problem> {
    let channels = read_channels(input, first)?;
    let Some(structure) = channels
        .iter()
        .find(|c| c.name == "CAN_DataFrame" || c.name == "CAN_RemoteFrame")
    else {
        return Ok(None);
    };
    let remote = structure.name == "CAN_RemoteFrame";
    let members = if structure.composition != 0 {
        read_channels(input, structure.composition)?
    } else {
        Vec::new()
    };
    let prefix = format!("{}.", structure.name);
    let member = |name: &str| -> Option<&Channel> {
        members
            .iter()
            .chain(&channels)
            .find(|c| c.name.strip_prefix(&prefix) == Some(name))
    };
    let fits = |c: &Channel| -> Result<Field, Problem> {
        let f = c.field;
        let end_bits = u64::from(f.bit) + u64::from(f.bits);
        if ![0, 2, 4, 5].contains(&c.kind) {
            return Err((
                c.at,
                format!(
                    "channel {} is of channel type {} (variable-length or virtual); only fixed-length members are read",
                    c.name, c.kind
                ),
            ));
        }
        if f.bit > 7 {
            return Err((
                c.at,
                format!("channel {} has bit offset {}, more than 7", c.name, f.bit),
            ));
        }
        if (f.byte as u64) * 8 + end_bits > size as u64 * 8 {
            return Err((c.at, format!("channel {} lies beyond its {size}-byte record", c.name)));
        }
        Ok(f)
    };
    let integer = |name: &str| -> Result<Option<Field>, Problem> {
        let Some(c) = member(name) else {
            return Ok(None);
        };
        let f = fits(c)?;
        if c.data_type > 1 || f.bits == 0 || f.bits > 64 {
            return Err((
                c.at,
                format!("channel {} is not an unsigned integer of 1 to 64 bits", c.name),
            ));
        }
        Ok(Some(f))
    };
    let Some(time) = channels.iter().find(|c| (c.kind == 2 || c.kind == 3) && c.sync == 1) else {
        return Err((
            group_at,
            format!("the group of {} has no time master channel", structure.name),
        ));
    };
    let time_field = fits(time)?;
    let single = match (time.kind, time.data_type, time_field.bits, time_field.bit) {
        (2, 4, 64, 0) => false,
        (2, 4, 32, 0) => true,
        _ => {
            return Err((
                time.at,
                format!(
                    "the time channel {} is not a little-endian float of 32 or 64 bits; convert the file with \
                     asammdf",
                    time.name
                ),
            ))
        }
    };
    let Some(id) = integer("ID")? else {
        return Err((structure.at, format!("{} has no ID member", structure.name)));
    };
    let data = match member("DataBytes") {
        Some(c) => {
            let f = fits(c)?;
            if c.kind != 0 || c.data_type != 10 || f.bit != 0 || !f.bits.is_multiple_of(8) {
                return Err((
                    c.at,
                    format!(
                        "channel {} is not a fixed-length byte array (variable-length data bytes are not read); \
                         convert the file with asammdf",
                        c.name
                    ),
                ));
            }
            Some((f.byte, (f.bits / 8) as usize))
        }
        None if remote => None,
        None => return Err((structure.at, format!("{} has no DataBytes member", structure.name))),
    };
    Ok(Some(CanLayout {
        remote,
        time: (time_field.byte, single),
        bus: integer("BusChannel")?,
        id,
        ide: integer("IDE")?,
        dlc: integer("DLC")?,
        length: integer("DataLength")?,
        dir: integer("Dir")?,
        edl: integer("EDL")?,
        brs: integer("BRS")?,
        esi: integer("ESI")?,
        data,
    }))
}

/// Adds the data blocks reached from `at` (DT, DZ, DL, HL) to `out`.
fn data_fragments(input: &impl ReadAt, at: u64, out: &mut Vec<Fragment>, depth: usize) -> Result<(), Problem> {
    if at == 0 {
        return Ok(());
    }
    if depth > 2 {
        return Err((at, "data lists nest too deep; the file is damaged".into()));
    }
    let mut header = [0u8; 4];
    read_exact_at(input, &mut header, at)?;
    match &header {
        b"##DT" => {
            let block = read_block(input, at, b"##DT", u64::MAX)?;
            out.push(Fragment::Plain(block.data_at, block.length - 24));
        }
        b"##DZ" => out.push(Fragment::Zipped(at)),
        b"##HL" => {
            let block = read_block(input, at, b"##HL", MAX_META_BLOCK)?;
            data_fragments(input, block.links.first().copied().unwrap_or(0), out, depth + 1)?;
        }
        b"##DL" => {
            let mut next = at;
            let mut lists = 0;
            while next != 0 {
                lists += 1;
                if lists > MAX_CHAIN {
                    return Err((next, format!("more than {MAX_CHAIN} data lists (a loop?)")));
                }
                let block = read_block(input, next, b"##DL", MAX_LIST_BLOCK)?;
                for &link in block.links.iter().skip(1) {
                    if out.len() >= MAX_CHAIN * 20 {
                        return Err((next, "more than 2 million data blocks".into()));
                    }
                    data_fragments(input, link, out, depth + 1)?;
                }
                next = block.links.first().copied().unwrap_or(0);
            }
        }
        other => {
            return Err((
                at,
                format!(
                    "expected a data block (DT, DZ, DL or HL), found {:?}",
                    String::from_utf8_lossy(other)
                ),
            ))
        }
    }
    Ok(())
}

/// Appends the records of the DZ block at `at` to `out`.
fn unzip(
    input: &impl ReadAt,
    at: u64,
    inflate: &mut Decompress,
    zipped: &mut Vec<u8>,
    out: &mut Vec<u8>,
) -> Result<(), Problem> {
    let block = read_block(input, at, b"##DZ", u64::MAX)?;
    let mut head = [0u8; 24];
    read_exact_at(input, &mut head, block.data_at)?;
    let (original, zip_type) = ([head[0], head[1]], head[2]);
    let parameter = u32::from_le_bytes(head[4..8].try_into().unwrap_or_default()) as usize;
    let original_size = u64::from_le_bytes(head[8..16].try_into().unwrap_or_default());
    let zipped_size = u64::from_le_bytes(head[16..24].try_into().unwrap_or_default());
    if &original != b"DT" {
        return Err((
            at,
            format!(
                "the DZ block holds a {:?} block, not DT",
                String::from_utf8_lossy(&original)
            ),
        ));
    }
    if original_size > MAX_DZ || zipped_size > MAX_DZ || zipped_size + 48 > block.length {
        return Err((
            at,
            format!(
                "the DZ block declares {zipped_size} bytes zipped into {original_size} (at most {MAX_DZ} each, \
                 within its {} bytes); the file is damaged",
                block.length
            ),
        ));
    }
    zipped.clear();
    zipped.resize(zipped_size as usize, 0);
    read_exact_at(input, zipped, block.data_at + 24)?;
    let before = out.len();
    out.reserve(original_size as usize);
    inflate.reset(true);
    let status = inflate
        .decompress_vec(zipped, out, FlushDecompress::Finish)
        .map_err(|e| (at, format!("the DZ block's zlib data is corrupt: {e}")))?;
    if status != Status::StreamEnd || (out.len() - before) as u64 != original_size {
        return Err((
            at,
            format!(
                "the DZ block's zlib data gives {} bytes, not the {original_size} it declares; the file is damaged",
                out.len() - before
            ),
        ));
    }
    match zip_type {
        0 => {}
        1 if parameter > 0 => {
            // Transposed: the bytes of each of `parameter` columns were
            // gathered; the tail beyond whole rows stays as it is.
            let data = &mut out[before..];
            let rows = data.len() / parameter;
            let whole = rows * parameter;
            let columns = data[..whole].to_vec();
            for (c, column) in columns.chunks_exact(rows.max(1)).enumerate().take(parameter) {
                for (r, &b) in column.iter().enumerate() {
                    data[r * parameter + c] = b;
                }
            }
        }
        other => {
            return Err((
                at,
                format!("the DZ block uses zip type {other}; only 0 and 1 (deflate) are read"),
            ))
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;
    use crate::log::test_records::{sample, write_all};
    use crate::log::Mf4Writer;

    fn written(records: &[LogRecord], start_ns: i64) -> Vec<u8> {
        let mut out = Cursor::new(Vec::new());
        write_all(Mf4Writer::new(&mut out, start_ns).unwrap(), records);
        out.into_inner()
    }

    #[test]
    fn frames_round_trip_to_the_nanosecond() {
        let records = sample();
        let bytes = written(&records, records[0].time_ns - 5_000_000_000);
        let read: Vec<_> = Mf4Reader::new(&bytes[..], "t.mf4")
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(read.len(), records.len());
        for (r, w) in read.iter().zip(&records) {
            let channel = if w.interface == "can0" { "1" } else { "2" };
            assert_eq!(
                (r.time_ns, r.interface.as_str(), r.frame, r.direction),
                (w.time_ns, channel, w.frame, w.direction)
            );
        }
    }

    #[test]
    fn frames_far_from_the_start_keep_their_nanoseconds() {
        // A virtual clock's log of a replayed real bus: start 0, frames in 2026.
        let records = sample();
        let bytes = written(&records, 0);
        let read: Vec<_> = Mf4Reader::new(&bytes[..], "t.mf4")
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let times: Vec<i64> = read.iter().map(|r| r.time_ns).collect();
        assert_eq!(times, records.iter().map(|r| r.time_ns).collect::<Vec<_>>());
    }

    #[test]
    fn damaged_files_get_errors_with_their_offset() {
        let bytes = written(&sample(), 0);
        let first_error = |bytes: &[u8]| -> String {
            match Mf4Reader::new(bytes, "t.mf4") {
                Err(e) => e.to_string(),
                Ok(reader) => reader
                    .filter_map(Result::err)
                    .next()
                    .map(|e| e.to_string())
                    .unwrap_or_default(),
            }
        };
        assert!(first_error(b"MDX").contains("t.mf4:byte 0: the file does not start"));
        let e = first_error(&bytes[..bytes.len() - 10]);
        assert!(e.contains("truncated"), "{e}");
        let mut huge = bytes.clone();
        huge[64 + 8..64 + 16].copy_from_slice(&u64::MAX.to_le_bytes());
        let e = first_error(&huge);
        assert!(
            e.contains("t.mf4:byte 64:") && e.contains("declares 18446744073709551615 bytes"),
            "{e}"
        );
    }
}
