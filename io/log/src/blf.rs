//! Vector's binary logging format (BLF), as CANoe, CANalyzer and
//! python-can's `BLFReader`/`BLFWriter` read and write it: a 144-byte
//! `LOGG` file header (with the start and stop times), then `LOBJ` objects,
//! mostly log containers (type 10) holding zlib-compressed runs of further
//! objects. Frames are written as `CAN_MESSAGE2` (type 86, classic) and
//! `CAN_FD_MESSAGE_64` (type 101, CAN FD) objects with times in
//! nanoseconds from the header's start time; the reader also reads
//! `CAN_MESSAGE` (1) and `CAN_FD_MESSAGE` (100) and skips other objects.
//! All numbers are little-endian; an object is followed by
//! `size % 4` padding bytes.
//!
//! A damaged file gets an error naming the byte offset of the top-level
//! object at fault, and allocates at most [`MAX_OBJECT`] bytes per
//! container, compressed (read as the file delivers them) and again
//! uncompressed.

use std::io::{self, Read, Seek, SeekFrom, Write};

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

use super::{ChannelNames, ChannelNumbers, Direction, Entry, LogError, LogWriter, Place};
use tandem_can::frame::{CanFrame, CanId, FrameError, FrameKind, FD_LENGTHS, FD_MAX_LEN};

/// The file header's size.
const FILE_HEADER: usize = 144;
/// An object's base header: signature, header size, header version,
/// object size, object type.
const BASE_HEADER: usize = 16;
/// The version-1 object header that follows: flags, client index, object
/// version, timestamp.
const V1_HEADER: usize = 16;
/// A log container's header after the base header: compression method,
/// uncompressed size.
const CONTAINER_HEADER: usize = 16;
/// Uncompressed bytes after which the writer closes a container (what
/// python-can and CANoe use).
const CONTAINER: usize = 128 * 1024;
/// The largest object the reader accepts (compressed container or object
/// inside one); real containers hold 128 KiB.
pub const MAX_OBJECT: usize = 16 << 20;
/// The earliest start time written as a date (1990-01-01, as python-can):
/// logs of the virtual clock start at 0 and get no date.
const DATED_FROM_MS: i64 = 631_152_000_000;

const LOG_CONTAINER: u32 = 10;
const CAN_MESSAGE: u32 = 1;
const CAN_MESSAGE2: u32 = 86;
const CAN_FD_MESSAGE: u32 = 100;
const CAN_FD_MESSAGE_64: u32 = 101;
const APP_TEXT: u32 = 65;
/// The most bytes of a comment's text kept in an `APP_TEXT` object.
const MAX_TEXT: usize = 1024;
/// Object header flag: timestamps in 10 µs units.
const TIME_TEN_MICROS: u32 = 1;
/// Object header flag: timestamps in nanoseconds.
const TIME_NANOS: u32 = 2;
/// Set in an identifier: extended.
const EXTENDED: u32 = 0x8000_0000;
const NO_COMPRESSION: u16 = 0;
const ZLIB: u16 = 2;

/// Writes frames as BLF. Channels are numbered from 1 in the order their
/// interfaces are declared or first appear. Objects are gathered into a reused buffer and
/// compressed into a log container when it holds 128 KiB or on
/// [`LogWriter::flush`], which also rewrites the header: a file flushed
/// last is complete.
pub struct BlfWriter<W: Write + Seek> {
    out: W,
    start_ns: i64,
    /// The time origin (ns), a whole millisecond, set by the first frame.
    origin_ns: Option<i64>,
    last_ns: i64,
    channels: ChannelNumbers,
    container: Vec<u8>,
    compressed: Vec<u8>,
    deflate: Compress,
    objects: u32,
    file_size: u64,
    uncompressed_size: u64,
}

impl<W: Write + Seek> BlfWriter<W> {
    /// A writer into `out` whose times count from `start_ns` (ns since the
    /// Unix epoch, or from a virtual clock's 0), or from the first frame
    /// if it is earlier; writes a provisional header at once.
    pub fn new(mut out: W, start_ns: i64) -> io::Result<Self> {
        out.write_all(&[0; FILE_HEADER])?;
        let mut writer = BlfWriter {
            out,
            start_ns,
            origin_ns: None,
            last_ns: start_ns,
            channels: ChannelNumbers::default(),
            container: Vec::with_capacity(CONTAINER + 256),
            // zlib's bound for incompressible input is 5 bytes per 16 KiB block and a few more.
            compressed: Vec::with_capacity(CONTAINER + CONTAINER / 64 + 1024),
            // Level 1: a sixth of the default level's time per container, for files about 60% larger.
            deflate: Compress::new(Compression::fast(), true),
            objects: 0,
            file_size: FILE_HEADER as u64,
            uncompressed_size: FILE_HEADER as u64,
        };
        writer.write_header()?;
        Ok(writer)
    }

    /// Rewrites the file header with the counts and times so far.
    fn write_header(&mut self) -> io::Result<()> {
        let mut h = [0u8; FILE_HEADER];
        h[0..4].copy_from_slice(b"LOGG");
        h[4..8].copy_from_slice(&(FILE_HEADER as u32).to_le_bytes());
        // Application 0 (unknown), BLF version 2.6.8.1 as python-can writes.
        h[12..16].copy_from_slice(&[2, 6, 8, 1]);
        h[16..24].copy_from_slice(&self.file_size.to_le_bytes());
        h[24..32].copy_from_slice(&self.uncompressed_size.to_le_bytes());
        h[32..36].copy_from_slice(&self.objects.to_le_bytes());
        let origin = self.origin_ns.unwrap_or(0);
        if origin != 0 {
            h[40..56].copy_from_slice(&system_time(origin));
            h[56..72].copy_from_slice(&system_time(self.last_ns));
        }
        self.out.seek(SeekFrom::Start(0))?;
        self.out.write_all(&h)?;
        self.out.seek(SeekFrom::End(0))?;
        Ok(())
    }

    /// Compresses the buffered objects into a log container and writes it.
    fn write_container(&mut self) -> io::Result<()> {
        if self.container.is_empty() {
            return Ok(());
        }
        self.compressed.clear();
        self.deflate.reset();
        let status = self
            .deflate
            .compress_vec(&self.container, &mut self.compressed, FlushCompress::Finish)
            .map_err(io::Error::other)?;
        if status != Status::StreamEnd {
            return Err(io::Error::other("the compressed container outgrew its buffer"));
        }
        let size = BASE_HEADER + CONTAINER_HEADER + self.compressed.len();
        let mut header = [0u8; BASE_HEADER + CONTAINER_HEADER];
        base_header(&mut header, BASE_HEADER as u16, size, LOG_CONTAINER);
        header[16..18].copy_from_slice(&ZLIB.to_le_bytes());
        header[24..28].copy_from_slice(&(self.container.len() as u32).to_le_bytes());
        self.out.write_all(&header)?;
        self.out.write_all(&self.compressed)?;
        self.out.write_all(&[0; 4][..size % 4])?;
        self.file_size += (size + size % 4) as u64;
        self.uncompressed_size += (BASE_HEADER + CONTAINER_HEADER + self.container.len()) as u64;
        self.container.clear();
        Ok(())
    }
}

/// Fills a base object header for an object of `size` bytes.
fn base_header(out: &mut [u8], header_size: u16, size: usize, kind: u32) {
    out[0..4].copy_from_slice(b"LOBJ");
    out[4..6].copy_from_slice(&header_size.to_le_bytes());
    out[6..8].copy_from_slice(&1u16.to_le_bytes());
    out[8..12].copy_from_slice(&(size as u32).to_le_bytes());
    out[12..16].copy_from_slice(&kind.to_le_bytes());
}

impl<W: Write + Seek + Send> LogWriter for BlfWriter<W> {
    fn declare(&mut self, interface: &str) -> io::Result<()> {
        self.channels.byte_of(interface).map(drop)
    }

    fn comment(&mut self, time_ns: i64, text: &str) -> io::Result<()> {
        let origin = self.origin_ns.unwrap_or(self.start_ns);
        let time = u64::try_from(time_ns - origin).unwrap_or(0);
        let text = &text.as_bytes()[..text.len().min(MAX_TEXT)];
        let size = BASE_HEADER + V1_HEADER + 16 + text.len();
        let mut header = [0u8; BASE_HEADER + V1_HEADER + 16];
        base_header(&mut header, (BASE_HEADER + V1_HEADER) as u16, size, APP_TEXT);
        header[16..20].copy_from_slice(&TIME_NANOS.to_le_bytes());
        header[24..32].copy_from_slice(&time.to_le_bytes());
        // Source 0 (a comment), then the text's length.
        header[BASE_HEADER + V1_HEADER + 8..BASE_HEADER + V1_HEADER + 12]
            .copy_from_slice(&(text.len() as u32).to_le_bytes());
        self.container.extend_from_slice(&header);
        self.container.extend_from_slice(text);
        self.container.extend_from_slice(&[0; 4][..size % 4]);
        self.objects += 1;
        if self.container.len() >= CONTAINER {
            self.write_container()?;
        }
        Ok(())
    }

    fn write_entry(&mut self, r: &Entry<'_>) -> io::Result<()> {
        let origin = *self.origin_ns.get_or_insert_with(|| {
            let ms = self.start_ns.min(r.time_ns).div_euclid(1_000_000);
            if ms < DATED_FROM_MS {
                0
            } else {
                ms * 1_000_000
            }
        });
        let Ok(time) = u64::try_from(r.time_ns - origin) else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a frame at {} ns comes before the log's start ({origin} ns); BLF times cannot be negative",
                    r.time_ns
                ),
            ));
        };
        self.last_ns = self.last_ns.max(r.time_ns);
        let channel = self.channels.byte_of(r.interface)?;
        let id = r.frame.id();
        let raw_id = id.raw() | if id.is_extended() { EXTENDED } else { 0 };
        let tx = r.direction == Direction::Tx;
        let mut object = [0u8; BASE_HEADER + V1_HEADER + 40 + FD_MAX_LEN];
        let size = match r.frame.kind() {
            FrameKind::Fd { brs, esi } => {
                let size = BASE_HEADER + V1_HEADER + 40 + r.frame.len();
                let flags = 0x1000 | u32::from(brs) << 13 | u32::from(esi) << 14;
                let d = &mut object[BASE_HEADER + V1_HEADER..];
                d[0] = channel;
                d[1] = r.frame.dlc();
                d[2] = r.frame.len() as u8;
                d[4..8].copy_from_slice(&raw_id.to_le_bytes());
                d[12..16].copy_from_slice(&flags.to_le_bytes());
                d[34] = u8::from(tx);
                d[40..40 + r.frame.len()].copy_from_slice(r.frame.payload());
                base_header(&mut object, (BASE_HEADER + V1_HEADER) as u16, size, CAN_FD_MESSAGE_64);
                size
            }
            FrameKind::Data | FrameKind::Remote => {
                let size = BASE_HEADER + V1_HEADER + 24;
                let flags = u8::from(tx) | if r.frame.is_remote() { 0x80 } else { 0 };
                let d = &mut object[BASE_HEADER + V1_HEADER..];
                d[0..2].copy_from_slice(&u16::from(channel).to_le_bytes());
                d[2] = flags;
                d[3] = r.frame.len() as u8;
                d[4..8].copy_from_slice(&raw_id.to_le_bytes());
                d[8..8 + r.frame.payload().len()].copy_from_slice(r.frame.payload());
                base_header(&mut object, (BASE_HEADER + V1_HEADER) as u16, size, CAN_MESSAGE2);
                size
            }
        };
        object[16..20].copy_from_slice(&TIME_NANOS.to_le_bytes());
        object[24..32].copy_from_slice(&time.to_le_bytes());
        self.container.extend_from_slice(&object[..size]);
        self.container.extend_from_slice(&[0; 4][..size % 4]);
        self.objects += 1;
        if self.container.len() >= CONTAINER {
            self.write_container()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.write_container()?;
        self.write_header()?;
        self.out.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.flush()
    }
}

/// A Windows SYSTEMTIME (year, month, weekday, day, hour, minute, second,
/// millisecond) of `ns` since the epoch, UTC.
fn system_time(ns: i64) -> [u8; 16] {
    let ms = ns.div_euclid(1_000_000);
    let days = ms.div_euclid(86_400_000);
    let in_day = ms.rem_euclid(86_400_000);
    let (year, month, day) = super::asc::civil_from_days(days);
    let fields = [
        year,
        month,
        (days + 4).rem_euclid(7),
        day,
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000,
    ];
    let mut out = [0u8; 16];
    for (chunk, value) in out.chunks_exact_mut(2).zip(fields) {
        chunk.copy_from_slice(&(value as u16).to_le_bytes());
    }
    out
}

/// Nanoseconds since the epoch of a SYSTEMTIME, or 0 when it is not a date
/// in nanoseconds' range (as python-can reads it).
fn from_system_time(raw: &[u8]) -> i64 {
    let field = |i: usize| i64::from(u16::from_le_bytes([raw[2 * i], raw[2 * i + 1]]));
    let (year, month, day, hour, minute, second, milli) =
        (field(0), field(1), field(3), field(4), field(5), field(6), field(7));
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 59 || milli > 999
    {
        return 0;
    }
    let days = super::asc::days_from_civil(year, month, day);
    (((days * 24 + hour) * 60 + minute) * 60 + second)
        .checked_mul(1_000_000_000)
        .and_then(|ns| ns.checked_add(milli * 1_000_000))
        .unwrap_or(0)
}

/// Reads BLF files object by object, frame by frame.
pub struct BlfReader<R> {
    input: R,
    file: String,
    /// The file offset of the next top-level object.
    offset: u64,
    /// The file offset of the container being read.
    container_offset: u64,
    start_ns: i64,
    /// The current container's objects (after any carried from the one
    /// before), and the position of the next.
    data: Vec<u8>,
    pos: usize,
    compressed: Vec<u8>,
    inflate: Decompress,
    names: ChannelNames,
}

/// A frame found in a container.
struct Found {
    time_ns: i64,
    channel: u16,
    frame: CanFrame,
    direction: Direction,
}

impl<R: Read> BlfReader<R> {
    /// A reader of `input`, named `file` in errors; reads the file header.
    pub fn new(mut input: R, file: &str) -> Result<Self, LogError> {
        let mut header = [0u8; FILE_HEADER];
        let error = |message: String| LogError {
            file: file.to_owned(),
            place: Place::Offset(0),
            message,
        };
        let got = read_full(&mut input, &mut header[..72]).map_err(|e| error(format!("cannot read: {e}")))?;
        if got < 72 || &header[0..4] != b"LOGG" {
            return Err(error(
                "the file does not start with a BLF header (`LOGG`); check that this is a BLF file".into(),
            ));
        }
        let header_size = u32::from_le_bytes([header[4], header[5], header[6], header[7]]) as usize;
        if !(72..=4096).contains(&header_size) {
            return Err(error(format!(
                "the header declares {header_size} bytes, not between 72 and 4096; the file is damaged"
            )));
        }
        let rest = header_size as u64 - 72;
        let skipped =
            io::copy(&mut (&mut input).take(rest), &mut io::sink()).map_err(|e| error(format!("cannot read: {e}")))?;
        if skipped < rest {
            return Err(error("the file ends inside its header: it is truncated".into()));
        }
        Ok(BlfReader {
            input,
            file: file.to_owned(),
            offset: header_size as u64,
            container_offset: header_size as u64,
            start_ns: from_system_time(&header[40..56]),
            data: Vec::new(),
            pos: 0,
            compressed: Vec::new(),
            inflate: Decompress::new(true),
            names: ChannelNames::default(),
        })
    }

    /// The next frame, its interface the channel number; `None` at the end
    /// of the file.
    pub fn next_entry(&mut self) -> Option<Result<Entry<'_>, LogError>> {
        loop {
            match self.next_in_container() {
                Err(e) => return Some(Err(e)),
                Ok(Some(found)) => {
                    return Some(Ok(Entry {
                        time_ns: found.time_ns,
                        interface: self.names.get(found.channel),
                        frame: found.frame,
                        direction: found.direction,
                    }))
                }
                Ok(None) => match self.read_container() {
                    Err(e) => return Some(Err(e)),
                    Ok(false) => return None,
                    Ok(true) => {}
                },
            }
        }
    }

    /// The next frame of the current container, or `None` when it holds no
    /// more whole objects.
    fn next_in_container(&mut self) -> Result<Option<Found>, LogError> {
        loop {
            let rest = &self.data[self.pos..];
            if rest.len() < BASE_HEADER {
                return Ok(None);
            }
            // Objects start on the next `LOBJ` within their padding.
            let Some(skip) = rest.windows(4).take(5).position(|w| w == b"LOBJ") else {
                return Err(self.error(format!(
                    "no object (`LOBJ`) at byte {} of the uncompressed container; the file is damaged",
                    self.pos
                )));
            };
            let at = self.pos + skip;
            let rest = &self.data[at..];
            if rest.len() < BASE_HEADER {
                return Ok(None);
            }
            let header_size = usize::from(u16_at(rest, 4));
            let version = u16_at(rest, 6);
            let size = u32_at(rest, 8) as usize;
            let kind = u32_at(rest, 12);
            if size > MAX_OBJECT || header_size < BASE_HEADER || size < header_size {
                return Err(self.error(format!(
                    "the object at byte {at} of the uncompressed container declares {size} bytes with a \
                     {header_size}-byte header (at most {MAX_OBJECT}); the file is damaged"
                )));
            }
            if rest.len() < size {
                return Ok(None);
            }
            let object = &rest[..size];
            self.pos = at + size;
            let (flags, timestamp) = match version {
                1 if header_size >= BASE_HEADER + V1_HEADER => (u32_at(object, 16), u64_at(object, 24)),
                2 if header_size >= BASE_HEADER + 24 => (u32_at(object, 16), u64_at(object, 24)),
                _ => continue,
            };
            let unit = if flags == TIME_TEN_MICROS { 10_000 } else { 1 };
            let body = &object[header_size..];
            let parsed = match kind {
                CAN_MESSAGE | CAN_MESSAGE2 => classic(body),
                CAN_FD_MESSAGE => fd(body),
                CAN_FD_MESSAGE_64 => fd64(body),
                _ => continue,
            };
            let (channel, frame, direction) = parsed.map_err(|problem| {
                self.error(format!(
                    "the frame object (type {kind}) at byte {at} of the uncompressed container {problem}"
                ))
            })?;
            let time_ns = i64::try_from(timestamp)
                .ok()
                .and_then(|t| t.checked_mul(unit))
                .and_then(|t| t.checked_add(self.start_ns))
                .ok_or_else(|| self.error(format!("the object at byte {at} has a time beyond the year 2262")))?;
            return Ok(Some(Found {
                time_ns,
                channel,
                frame,
                direction,
            }));
        }
    }

    /// Reads top-level objects up to the next log container and unpacks
    /// it after what is left of the one before; `false` at the end of the
    /// file.
    fn read_container(&mut self) -> Result<bool, LogError> {
        loop {
            self.container_offset = self.offset;
            let mut header = [0u8; BASE_HEADER];
            let got = read_full(&mut self.input, &mut header).map_err(|e| self.error(format!("cannot read: {e}")))?;
            if got == 0 {
                if self.data.len() - self.pos >= BASE_HEADER {
                    return Err(self.error(format!(
                        "the file ends inside an object ({} bytes of it are there): it is truncated",
                        self.data.len() - self.pos
                    )));
                }
                return Ok(false);
            }
            if got < BASE_HEADER || &header[0..4] != b"LOBJ" {
                return Err(self.error(if got < BASE_HEADER {
                    "the file ends inside an object header: it is truncated".into()
                } else {
                    "no object (`LOBJ`) here; the file is damaged".into()
                }));
            }
            let size = u32_at(&header, 8) as usize;
            let kind = u32_at(&header, 12);
            if !(BASE_HEADER..=MAX_OBJECT).contains(&size) {
                return Err(self.error(format!(
                    "the object declares {size} bytes, not between {BASE_HEADER} and {MAX_OBJECT}; the file is \
                     damaged"
                )));
            }
            let padding = size % 4;
            self.offset += (size + padding) as u64;
            if kind != LOG_CONTAINER {
                let body = (size - BASE_HEADER) as u64;
                let skipped = io::copy(&mut (&mut self.input).take(body), &mut io::sink())
                    .map_err(|e| self.error(format!("cannot read: {e}")))?;
                if skipped < body {
                    return Err(self.error("the file ends inside an object: it is truncated".into()));
                }
                self.skip_padding(padding)?;
                continue;
            }
            let mut container = [0u8; CONTAINER_HEADER];
            if size < BASE_HEADER + CONTAINER_HEADER
                || read_full(&mut self.input, &mut container).map_err(|e| self.error(format!("cannot read: {e}")))?
                    < CONTAINER_HEADER
            {
                return Err(self.error("the log container ends inside its header: it is truncated".into()));
            }
            let method = u16_at(&container, 0);
            let uncompressed = u32_at(&container, 8) as usize;
            if uncompressed > MAX_OBJECT {
                return Err(self.error(format!(
                    "the log container declares {uncompressed} uncompressed bytes, more than {MAX_OBJECT}; the \
                     file is damaged"
                )));
            }
            self.compressed.clear();
            let body = size - BASE_HEADER - CONTAINER_HEADER;
            // Read as it comes: a truncated file allocates no more than it holds.
            let got = (&mut self.input)
                .take(body as u64)
                .read_to_end(&mut self.compressed)
                .map_err(|e| self.error(format!("cannot read: {e}")))?;
            if got < body {
                return Err(self.error("the file ends inside a log container: it is truncated".into()));
            }
            self.skip_padding(padding)?;
            self.data.drain(..self.pos);
            self.pos = 0;
            let before = self.data.len();
            if before + uncompressed > MAX_OBJECT {
                return Err(self.error(format!(
                    "an object spans more than {MAX_OBJECT} bytes of log containers; the file is damaged"
                )));
            }
            match method {
                NO_COMPRESSION => self.data.extend_from_slice(&self.compressed),
                ZLIB => {
                    self.data.reserve(uncompressed);
                    self.inflate.reset(true);
                    let status = self
                        .inflate
                        .decompress_vec(&self.compressed, &mut self.data, FlushDecompress::Finish)
                        .map_err(|e| self.error(format!("the log container's zlib data is corrupt: {e}")))?;
                    if status != Status::StreamEnd || self.data.len() - before != uncompressed {
                        return Err(self.error(format!(
                            "the log container's zlib data gives {} bytes{}, not the {uncompressed} it declares; the \
                             file is damaged",
                            self.data.len() - before,
                            if status == Status::StreamEnd {
                                ""
                            } else {
                                " and ends early"
                            }
                        )));
                    }
                }
                other => {
                    return Err(self.error(format!(
                        "the log container uses compression method {other}; only 0 (none) and 2 (zlib) exist"
                    )))
                }
            }
            return Ok(true);
        }
    }

    /// Skips up to `n` padding bytes (the last object's may be missing).
    fn skip_padding(&mut self, n: usize) -> Result<(), LogError> {
        let mut padding = [0u8; 4];
        read_full(&mut self.input, &mut padding[..n]).map_err(|e| self.error(format!("cannot read: {e}")))?;
        Ok(())
    }
}

impl<R> BlfReader<R> {
    /// An error at the top-level object read last, saying `message`.
    pub fn error(&self, message: String) -> LogError {
        LogError {
            file: self.file.clone(),
            place: Place::Offset(self.container_offset),
            message,
        }
    }
}

records_from_entries!(BlfReader<R>, R: Read);
/// Reads until `buf` is full or the input ends; how many bytes came.
fn read_full(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(bytes)
}

/// What is wrong with a frame object, as the rest of a sentence about it.
#[derive(Debug, thiserror::Error)]
enum BadObject {
    /// Shorter than its kind's fixed part.
    #[error("has {have} bytes, fewer than the {need} of {what}")]
    Short {
        /// Its bytes.
        have: usize,
        /// The fixed part's.
        need: usize,
        /// Its kind.
        what: &'static str,
    },
    /// A CAN FD frame whose length is not one of CAN FD's.
    #[error("has {0} data bytes, not a CAN FD length")]
    FdLength(usize),
    /// Its identifier or data make no frame.
    #[error("holds no valid frame: {0}")]
    Frame(#[from] FrameError),
}

/// A frame object's channel, frame and direction, or what is wrong with it.
type Parsed = Result<(u16, CanFrame, Direction), BadObject>;

/// The identifier of a BLF frame object.
fn can_id(raw: u32) -> Result<CanId, FrameError> {
    CanId::new(raw & !EXTENDED, raw & EXTENDED != 0)
}

/// `CAN_MESSAGE` and `CAN_MESSAGE2`: channel u16, flags u8 (bit 0 sent,
/// bit 7 remote), DLC u8, identifier u32, 8 data bytes.
fn classic(body: &[u8]) -> Parsed {
    if body.len() < 16 {
        return Err(BadObject::Short {
            have: body.len(),
            need: 16,
            what: "a CAN message",
        });
    }
    let flags = body[2];
    let len = usize::from(body[3]).min(8);
    let id = can_id(u32_at(body, 4))?;
    let frame = if flags & 0x80 != 0 {
        CanFrame::remote(id, len)
    } else {
        CanFrame::data(id, &body[8..8 + len])
    }?;
    Ok((u16_at(body, 0), frame, direction(flags & 1 != 0)))
}

/// `CAN_FD_MESSAGE`: channel u16, flags u8, DLC u8, identifier u32, frame
/// length u32, bit count u8, FD flags u8 (EDL, BRS, ESI), valid data bytes
/// u8, 5 reserved, 64 data bytes.
fn fd(body: &[u8]) -> Parsed {
    if body.len() < 84 {
        return Err(BadObject::Short {
            have: body.len(),
            need: 84,
            what: "a CAN FD message",
        });
    }
    let (flags, fd_flags) = (body[2], body[13]);
    let id = can_id(u32_at(body, 4))?;
    let len = usize::from(body[14]);
    let frame = if fd_flags & 1 != 0 {
        fd_frame(id, &body[20..], len, fd_flags & 2 != 0, fd_flags & 4 != 0)?
    } else if flags & 0x80 != 0 {
        CanFrame::remote(id, usize::from(body[3]).min(8))?
    } else {
        CanFrame::data(id, &body[20..20 + len.min(8)])?
    };
    Ok((u16_at(body, 0), frame, direction(flags & 1 != 0)))
}

/// `CAN_FD_MESSAGE_64`: channel u8, DLC u8, valid data bytes u8, tx count
/// u8, identifier u32, frame length u32, flags u32 (bit 4 remote, 12 EDL,
/// 13 BRS, 14 ESI), bit timings, bit count u16, direction u8, extended
/// data offset u8, CRC u32, then the data bytes (missing ones read as 0,
/// as CANoe and python-can do).
fn fd64(body: &[u8]) -> Parsed {
    if body.len() < 40 {
        return Err(BadObject::Short {
            have: body.len(),
            need: 40,
            what: "a CAN FD message header",
        });
    }
    let id = can_id(u32_at(body, 4))?;
    let flags = u32_at(body, 12);
    let len = usize::from(body[2]);
    let data = &body[40..];
    let frame = if flags & 0x1000 != 0 {
        fd_frame(id, data, len, flags & 0x2000 != 0, flags & 0x4000 != 0)?
    } else if flags & 0x10 != 0 {
        CanFrame::remote(id, usize::from(body[1]).min(8))?
    } else {
        let mut buf = [0u8; 8];
        let len = len.min(8);
        let there = data.len().min(len);
        buf[..there].copy_from_slice(&data[..there]);
        CanFrame::data(id, &buf[..len])?
    };
    Ok((u16::from(body[0]), frame, direction(body[34] != 0)))
}

/// A CAN FD frame of `len` bytes from `data` (zeros past its end).
fn fd_frame(id: CanId, data: &[u8], len: usize, brs: bool, esi: bool) -> Result<CanFrame, BadObject> {
    if !FD_LENGTHS.contains(&len) {
        return Err(BadObject::FdLength(len));
    }
    let mut buf = [0u8; FD_MAX_LEN];
    let there = data.len().min(len);
    buf[..there].copy_from_slice(&data[..there]);
    Ok(CanFrame::fd(id, &buf[..len], brs, esi)?)
}

fn direction(sent: bool) -> Direction {
    if sent {
        Direction::Tx
    } else {
        Direction::Rx
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;
    use crate::test_records::{assert_read_back, first_error, sample, write_all};
    use crate::LogRecord;

    fn written(records: &[LogRecord], start_ns: i64) -> Vec<u8> {
        let mut out = Cursor::new(Vec::new());
        write_all(BlfWriter::new(&mut out, start_ns).unwrap(), records);
        out.into_inner()
    }

    #[test]
    fn frames_round_trip_to_the_nanosecond() {
        let records = sample();
        let bytes = written(&records, records[0].time_ns);
        let read: Vec<_> = BlfReader::new(&bytes[..], "t.blf")
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_read_back(&read, &records);
    }

    #[test]
    fn damaged_files_get_errors_with_their_offset() {
        let bytes = written(&sample(), 0);
        let first_error = |bytes: &[u8]| first_error(BlfReader::new(bytes, "t.blf"));
        assert!(first_error(b"LOGX").contains("t.blf:byte 0: the file does not start"));
        let e = first_error(&bytes[..bytes.len() - 10]);
        assert!(e.contains("byte 144:") && e.contains("truncated"), "{e}");
        let mut huge = bytes.clone();
        huge[152..156].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(first_error(&huge).contains("declares 4294967295 bytes"));
        let mut bad_zlib = bytes.clone();
        bad_zlib[144 + 40] ^= 0xFF;
        let e = first_error(&bad_zlib);
        assert!(e.contains("byte 144:") && e.contains("zlib"), "{e}");
    }
}
