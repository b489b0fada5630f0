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
//! `.ESI` and `.DataBytes`, as unsigned integers of any bit position and
//! byte order. The data bytes are a fixed-length byte array in the record,
//! or variable-length signal data (VLSD): the record holds an offset into
//! the channel's signal data blocks (SD, as CANedge and asammdf write
//! them), or into the records of a VLSD channel group of the same data
//! group (as CANape writes them), each value a u32 length and its bytes.
//! VLSD records must come before the records that point to them, and
//! offsets into signal data must not go back.
//!
//! A damaged file gets an error naming the byte offset of the block at
//! fault, and allocates at most what its bounds allow: 1 MiB per metadata
//! block, 16 MiB per data list, 64 MiB per DZ block (zipped and
//! unzipped), 1 MiB per record, 1 MiB chunks of plain data, 64 bytes per
//! VLSD value and [`MAX_WAITING`] VLSD records waiting for theirs.

use std::collections::VecDeque;

use super::mf4_block::{
    block_data, read_block, read_exact_at, read_fully, read_text, Problem, ReadAt, MAX_CHAIN, MAX_META_BLOCK,
};
use super::mf4_data::{Data, Unzipper};
use super::{ChannelNames, Direction, Entry, LogError, Place};
use tandem_can::frame::{CanFrame, CanId, FrameError, FD_LENGTHS, FD_MAX_LEN};

/// The longest fixed-length record accepted (bytes; a CAN frame's is
/// under 100).
const MAX_RECORD: usize = 1 << 20;
/// The most records of a VLSD channel group held until the records that
/// point to them come.
pub const MAX_WAITING: usize = 4096;

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
    data: Option<DataBytes>,
}

/// Where a frame's data bytes are.
#[derive(Clone, Copy, Debug)]
enum DataBytes {
    /// In the record: byte offset and count.
    Fixed(usize, usize),
    /// In variable-length signal data, at the offset the record holds as
    /// a u64 at this byte.
    Signal(usize, Source),
}

/// Where variable-length signal data is.
#[derive(Clone, Copy, Debug)]
enum Source {
    /// In signal data blocks: the index of their [`Data`] in the stream.
    Blocks(usize),
    /// In the records of the VLSD channel group of this record id.
    Group(u64),
}

/// A channel group's records in its data group's stream.
#[derive(Clone, Debug)]
struct Group {
    record_id: u64,
    /// Record bytes after the record id, or `None` for variable-length
    /// (VLSD) records, which carry their length.
    size: Option<usize>,
    can: Option<CanLayout>,
    /// For a VLSD group that data bytes point to: the index of its queue.
    queue: Option<usize>,
}

/// The values of a VLSD channel group read ahead of the records that
/// point to them.
struct Waiting {
    record_id: u64,
    /// The offset of the next value (each is a u32 length and its bytes).
    next: u64,
    /// Offset, length and bytes of each value not yet taken.
    values: VecDeque<(u64, usize, [u8; FD_MAX_LEN])>,
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
    data: Data,
    /// The signal data of VLSD data bytes, read along.
    signal_data: Vec<Data>,
    /// The values of VLSD groups, by [`Group::queue`].
    waiting: Vec<Waiting>,
    peeked: Option<Found>,
}

/// Reads CAN frames from an MDF4 file.
pub struct Mf4Reader<R> {
    input: R,
    file: String,
    start_ns: i64,
    streams: Vec<Stream>,
    unzip: Unzipper,
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
        if read_fully(&input, &mut id, 0).map_err(error)? < 64 || &id[0..3] != b"MDF" {
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
            let mut signal_links = Vec::new();
            let (groups, waiting) = read_groups(&input, dg.links[1], &mut signal_links).map_err(error)?;
            if groups.iter().any(|g| g.can.is_some()) {
                if record_id_size == 0 && groups.len() > 1 {
                    return Err(error((
                        dg_at,
                        "a data group of several channel groups has no record ids".into(),
                    )));
                }
                let mut data = Data::new(&input, dg.links[2], *b"DT").map_err(error)?;
                data.at = dg_at;
                let signal_data = signal_links
                    .iter()
                    .map(|&link| Data::new(&input, link, *b"SD"))
                    .collect::<Result<_, _>>()
                    .map_err(error)?;
                streams.push(Stream {
                    record_id_size,
                    groups,
                    data,
                    signal_data,
                    waiting,
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
            unzip: Unzipper::new(),
            names: ChannelNames::default(),
            at: 0,
        })
    }

    /// The next frame in time order, its interface the bus channel number;
    /// `None` at the end of the file.
    pub fn next_entry(&mut self) -> Option<Result<Entry<'_>, LogError>> {
        if self.streams.len() == 1 {
            // One data group (Tandem's writer, most loggers): nothing to merge.
            return match self.read_frame(0) {
                Ok(found) => {
                    let found = found?;
                    self.at = self.streams[0].data.at;
                    Some(Ok(Entry {
                        time_ns: found.time_ns,
                        interface: self.names.get(found.channel),
                        frame: found.frame,
                        direction: found.direction,
                    }))
                }
                Err((at, message)) => {
                    self.at = at;
                    Some(Err(self.error(message)))
                }
            };
        }
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
        self.at = self.streams[i].data.at;
        Some(Ok(Entry {
            time_ns: found.time_ns,
            interface: self.names.get(found.channel),
            frame: found.frame,
            direction: found.direction,
        }))
    }

    /// The next frame of stream `i`, or `None` at its end.
    fn read_frame(&mut self, i: usize) -> Result<Option<Found>, Problem> {
        let Mf4Reader {
            input,
            streams,
            unzip,
            start_ns,
            ..
        } = self;
        let start_ns = *start_ns;
        let Stream {
            record_id_size,
            groups,
            data,
            signal_data,
            waiting,
            ..
        } = &mut streams[i];
        let id_size = *record_id_size;
        loop {
            if !data.has(id_size.max(1)) && !data.fill(input, unzip, id_size.max(1))? {
                if data.has(1) {
                    return Err(truncated(data));
                }
                return Ok(None);
            }
            let record_id = if id_size == 0 {
                groups[0].record_id
            } else {
                let mut bytes = [0u8; 8];
                bytes[..id_size].copy_from_slice(&data.buf[data.pos..data.pos + id_size]);
                u64::from_le_bytes(bytes)
            };
            let Some(group) = groups.iter().find(|g| g.record_id == record_id) else {
                return Err((
                    data.at,
                    format!("a record has id {record_id}, which no channel group of its data group has; the file is damaged"),
                ));
            };
            let Some(size) = group.size else {
                read_vlsd(input, unzip, data, id_size, group, waiting)?;
                continue;
            };
            if !data.has(id_size + size) && !data.fill(input, unzip, id_size + size)? {
                return Err(truncated(data));
            }
            let record = &data.buf[data.pos + id_size..data.pos + id_size + size];
            let Some(layout) = &group.can else {
                data.pos += id_size + size;
                continue;
            };
            let found = match layout.data {
                None => decode(layout, record, &[], start_ns),
                Some(DataBytes::Fixed(at, count)) => decode(layout, record, &record[at..at + count], start_ns),
                Some(DataBytes::Signal(at, source)) => {
                    let offset = u64::from_le_bytes(record[at..at + 8].try_into().unwrap_or_default());
                    match source {
                        Source::Blocks(k) => {
                            let sd = &mut signal_data[k];
                            let (len, at) = signal_value(input, unzip, sd, offset)?;
                            decode(layout, record, &sd.buf[at..at + len], start_ns)
                        }
                        Source::Group(vlsd_id) => {
                            let payload = waiting_value(waiting, vlsd_id, offset, data.at)?;
                            decode(layout, record, payload, start_ns)
                        }
                    }
                }
            };
            data.pos += id_size + size;
            return found.map(Some).map_err(|e| (data.at, e.to_string()));
        }
    }
}

/// The error for data that ends inside a record.
fn truncated(data: &Data) -> Problem {
    (data.at, "the data ends inside a record: it is truncated".to_string())
}

/// Reads a VLSD record of `group` (after its record id: a u32 length and
/// that many bytes) from `data`: into its queue in `waiting` until the
/// record that points to it comes, or skipped when no CAN frame's data
/// bytes are in the group.
fn read_vlsd(
    input: &impl ReadAt,
    unzip: &mut Unzipper,
    data: &mut Data,
    id_size: usize,
    group: &Group,
    waiting: &mut [Waiting],
) -> Result<(), Problem> {
    let record_id = group.record_id;
    if !data.fill(input, unzip, id_size + 4)? {
        return Err(truncated(data));
    }
    let at = data.pos + id_size;
    let len = u32::from_le_bytes([data.buf[at], data.buf[at + 1], data.buf[at + 2], data.buf[at + 3]]);
    data.pos += id_size + 4;
    let Some(queue) = group.queue else {
        if !data.skip(input, unzip, u64::from(len))? {
            return Err(truncated(data));
        }
        return Ok(());
    };
    let len = len as usize;
    let w = &mut waiting[queue];
    if len > FD_MAX_LEN {
        return Err((
            data.at,
            format!(
                "the VLSD record at offset {} of channel group {record_id} holds {len} data bytes, more than the {FD_MAX_LEN} of a CAN frame",
                w.next
            ),
        ));
    }
    if w.values.len() >= MAX_WAITING {
        return Err((
            data.at,
            format!(
                "more than {MAX_WAITING} VLSD records of channel group {record_id} wait for the records that point to them; the file is damaged"
            ),
        ));
    }
    if !data.fill(input, unzip, len)? {
        return Err(truncated(data));
    }
    let mut bytes = [0u8; FD_MAX_LEN];
    bytes[..len].copy_from_slice(&data.buf[data.pos..data.pos + len]);
    data.pos += len;
    w.values.push_back((w.next, len, bytes));
    w.next += 4 + len as u64;
    Ok(())
}

/// The value at `offset` of the VLSD channel group with record id
/// `vlsd_id`, from its queue in `waiting` (values before it are dropped:
/// no record will point to them); errors are placed at `at`, the record's.
fn waiting_value(waiting: &mut [Waiting], vlsd_id: u64, offset: u64, at: u64) -> Result<&[u8], Problem> {
    let Some(w) = waiting.iter_mut().find(|w| w.record_id == vlsd_id) else {
        return Err((at, format!("no VLSD channel group has record id {vlsd_id}")));
    };
    while w.values.front().is_some_and(|v| v.0 < offset) {
        w.values.pop_front();
    }
    match w.values.front() {
        Some((o, len, bytes)) if *o == offset => Ok(&bytes[..*len]),
        _ => Err((
            at,
            format!(
                "a record points to offset {offset} of VLSD channel group {vlsd_id}, where no record before it is (VLSD records must come first); the file is damaged"
            ),
        )),
    }
}

/// The value at `offset` of signal data `sd`: its length, and where its
/// bytes are in `sd.buf`.
fn signal_value(
    input: &impl ReadAt,
    unzip: &mut Unzipper,
    sd: &mut Data,
    offset: u64,
) -> Result<(usize, usize), Problem> {
    let position = sd.position();
    if offset < position {
        return Err((
            sd.at,
            format!(
                "a record points to offset {offset} of its signal data, before the value read last (which ends at {position}); Tandem reads signal data in order"
            ),
        ));
    }
    let past_end = |sd: &Data| {
        (
            sd.at,
            format!("a record points to offset {offset} of its signal data, past its end; the file is damaged"),
        )
    };
    if !sd.skip(input, unzip, offset - position)? || !sd.fill(input, unzip, 4)? {
        return Err(past_end(sd));
    }
    let at = sd.pos;
    let len = u32::from_le_bytes([sd.buf[at], sd.buf[at + 1], sd.buf[at + 2], sd.buf[at + 3]]) as usize;
    if len > FD_MAX_LEN {
        return Err((
            sd.at,
            format!(
                "the signal data value at offset {offset} declares {len} data bytes, more than the {FD_MAX_LEN} of a \
                 CAN frame; the file is damaged"
            ),
        ));
    }
    if !sd.fill(input, unzip, 4 + len)? {
        return Err((
            sd.at,
            format!("the signal data ends inside the value at offset {offset}: it is truncated"),
        ));
    }
    sd.pos += 4 + len;
    Ok((len, sd.pos - len))
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

records_from_entries!(Mf4Reader<R>, R: ReadAt);
/// What is wrong with a frame record.
#[derive(Debug, thiserror::Error)]
enum BadRecord {
    /// Its time is not finite or beyond ±9e18 ns from the start.
    #[error("a frame's time ({0} s) is not a time in range")]
    TimeRange(f64),
    /// Its time is beyond what nanoseconds since 1970 hold in an i64.
    #[error("a frame's time ({0} s) is beyond the year 2262")]
    TimeBeyond(f64),
    /// Its identifier is out of range.
    #[error("a frame's {0}")]
    Id(FrameError),
    /// Its DLC is not a DLC.
    #[error("a frame's DLC {0} is not 0 to 15")]
    Dlc(u64),
    /// Its data length exceeds the bytes it has.
    #[error("a frame's data length {length} exceeds its {have} data bytes")]
    Length {
        /// The length it declares.
        length: usize,
        /// The bytes there are.
        have: usize,
    },
    /// Its fields make no frame.
    #[error("a frame: {0}")]
    Frame(FrameError),
}

/// The frame in `record`, its data bytes `payload`.
fn decode(layout: &CanLayout, record: &[u8], payload: &[u8], start_ns: i64) -> Result<Found, BadRecord> {
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
    let offset_ns = seconds * 1e9;
    if !offset_ns.is_finite() || offset_ns.abs() > 9.0e18 {
        return Err(BadRecord::TimeRange(seconds));
    }
    let time_ns = start_ns
        .checked_add(round_ns(offset_ns))
        .ok_or(BadRecord::TimeBeyond(seconds))?;
    let get = |field: Option<Field>| field.map_or(0, |f| f.read(record));
    let raw_id = layout.id.read(record);
    let extended = match layout.ide {
        Some(ide) => ide.read(record) != 0,
        None => raw_id & 0x8000_0000 != 0,
    };
    let raw = (raw_id & 0x1FFF_FFFF) as u32;
    let id = CanId::new(raw, extended).map_err(BadRecord::Id)?;
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
        None => return Err(BadRecord::Dlc(dlc)),
    };
    let payload = match payload.get(..length) {
        _ if layout.remote => &[][..],
        Some(payload) => payload,
        None => {
            return Err(BadRecord::Length {
                length,
                have: payload.len(),
            })
        }
    };
    let frame = if layout.remote {
        CanFrame::remote(id, length)
    } else if fd {
        CanFrame::fd(id, payload, get(layout.brs) != 0, get(layout.esi) != 0)
    } else {
        CanFrame::data(id, payload)
    }
    .map_err(BadRecord::Frame)?;
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

/// `ns` (finite, within ±9e18) rounded to the nearest integer, halves
/// away from zero as `f64::round`, without its library call.
#[inline]
fn round_ns(ns: f64) -> i64 {
    let whole = ns as i64;
    let fraction = ns - whole as f64;
    if fraction >= 0.5 {
        whole + 1
    } else if fraction <= -0.5 {
        whole - 1
    } else {
        whole
    }
}

/// A channel's name and, for the ones read, its place in the record.
struct Channel {
    name: String,
    kind: u8,
    sync: u8,
    data_type: u8,
    field: Field,
    composition: u64,
    /// The link to its signal data (of a VLSD channel).
    signal_data: u64,
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
        signal_data: block.links[5],
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
/// The channel groups of the chain starting at `at`, and a queue for each
/// VLSD group that data bytes point to; the links of the signal data that
/// data bytes point to go to `signal_links`.
fn read_groups(
    input: &impl ReadAt,
    mut at: u64,
    signal_links: &mut Vec<u64>,
) -> Result<(Vec<Group>, Vec<Waiting>), Problem> {
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
            can_layout(input, block.links[1], size, at, signal_links)?
        };
        groups.push(Group {
            record_id: word(0),
            size: (!vlsd).then_some(size),
            can,
            queue: None,
        });
        at = block.links[0];
    }
    let mut waiting = Vec::new();
    for i in 0..groups.len() {
        let Some(DataBytes::Signal(_, Source::Group(vlsd_id))) = groups[i].can.as_ref().and_then(|c| c.data) else {
            continue;
        };
        let Some(target) = groups.iter().position(|g| g.record_id == vlsd_id && g.size.is_none()) else {
            return Err((
                at,
                format!(
                    "data bytes point to channel group {vlsd_id}, which is no VLSD channel group of their data group"
                ),
            ));
        };
        if groups[target].queue.is_none() {
            groups[target].queue = Some(waiting.len());
            waiting.push(Waiting {
                record_id: vlsd_id,
                next: 0,
                values: VecDeque::new(),
            });
        }
    }
    Ok((groups, waiting))
}

/// How the group whose channels start at `first` holds CAN frames in
/// records of `size` bytes, or `None` when it holds none.
fn can_layout(
    input: &impl ReadAt,
    first: u64,
    size: usize,
    group_at: u64,
    signal_links: &mut Vec<u64>,
) -> Result<Option<CanLayout>, Problem> {
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
        Some(c) if c.kind == 1 => {
            let f = c.field;
            if c.data_type != 10 || f.bit != 0 || f.bits != 64 || f.byte + 8 > size {
                return Err((
                    c.at,
                    format!(
                        "channel {} is variable-length but not a byte array with a 64-bit offset within its \
                         {size}-byte record",
                        c.name
                    ),
                ));
            }
            Some(DataBytes::Signal(f.byte, signal_source(input, c, signal_links)?))
        }
        Some(c) => {
            let f = fits(c)?;
            if c.kind != 0 || c.data_type != 10 || f.bit != 0 || !f.bits.is_multiple_of(8) {
                return Err((c.at, format!("channel {} is not a byte array", c.name)));
            }
            Some(DataBytes::Fixed(f.byte, (f.bits / 8) as usize))
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

/// Where the VLSD channel `c` keeps its values: a VLSD channel group
/// (its record id), or signal data blocks (their link goes to
/// `signal_links`).
fn signal_source(input: &impl ReadAt, c: &Channel, signal_links: &mut Vec<u64>) -> Result<Source, Problem> {
    let mut kind = [0u8; 4];
    if c.signal_data != 0 {
        read_exact_at(input, &mut kind, c.signal_data)?;
    }
    if &kind == b"##CG" {
        let block = read_block(input, c.signal_data, b"##CG", MAX_META_BLOCK)?;
        let data = block_data(input, &block, 8)?;
        let record_id = u64::from_le_bytes(
            data.get(..8)
                .and_then(|d| d.try_into().ok())
                .ok_or_else(|| (c.signal_data, "the channel group block is too short".to_string()))?,
        );
        return Ok(Source::Group(record_id));
    }
    signal_links.push(c.signal_data);
    Ok(Source::Blocks(signal_links.len() - 1))
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;
    use crate::test_records::{assert_read_back, first_error, sample, write_all};
    use crate::LogRecord;
    use crate::Mf4Writer;

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
        assert_read_back(&read, &records);
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
        let first_error = |bytes: &[u8]| first_error(Mf4Reader::new(bytes, "t.mf4"));
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
