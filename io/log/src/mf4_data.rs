//! The bytes of an MDF4 data group's records, or of a channel's signal
//! data (SD), read in order through one reused buffer: the data blocks
//! (DT or SD) reached through DL lists (HL-wrapped or not) and zlib DZ
//! blocks, plain or transposed.

use flate2::{Decompress, FlushDecompress, Status};

use super::mf4_block::{
    read_block, read_exact_at, read_fully, Problem, ReadAt, MAX_CHAIN, MAX_LIST_BLOCK, MAX_META_BLOCK,
};

/// The largest uncompressed DZ block accepted.
pub const MAX_DZ: u64 = 64 << 20;
/// How much of a plain data block is read at once.
const CHUNK: usize = 1 << 20;

/// A part of the data.
#[derive(Clone, Copy, Debug)]
enum Fragment {
    /// Raw bytes: file offset and length.
    Plain(u64, u64),
    /// A DZ block: its address.
    Zipped(u64),
}

/// zlib's state and the compressed bytes of a DZ block, shared by every
/// [`Data`] of a file.
pub(super) struct Unzipper {
    inflate: Decompress,
    zipped: Vec<u8>,
}

impl Unzipper {
    /// A fresh one.
    pub(super) fn new() -> Self {
        Unzipper {
            inflate: Decompress::new(true),
            zipped: Vec::new(),
        }
    }
}

/// The data of a data group or of signal data, read in order.
pub(super) struct Data {
    /// The block kind of the plain data: `DT` or `SD`.
    kind: [u8; 2],
    fragments: Vec<Fragment>,
    next_fragment: usize,
    /// Within the current plain fragment: next offset and bytes left.
    plain: (u64, u64),
    /// The buffered bytes; `pos` is the next to read.
    pub(super) buf: Vec<u8>,
    pub(super) pos: usize,
    /// The position in the data of `buf[0]`.
    base: u64,
    /// Where the block being read is (for errors).
    pub(super) at: u64,
}

impl Data {
    /// The data reached from the link `at` (a DT or SD block as `kind`
    /// says, a DZ of one, a DL list or an HL header of lists; 0 for none).
    pub(super) fn new(input: &impl ReadAt, at: u64, kind: [u8; 2]) -> Result<Self, Problem> {
        let mut fragments = Vec::new();
        fragments_of(input, at, kind, &mut fragments, 0)?;
        Ok(Data {
            kind,
            fragments,
            next_fragment: 0,
            plain: (0, 0),
            buf: Vec::new(),
            pos: 0,
            base: 0,
            at,
        })
    }

    /// Whether `n` bytes are buffered at the position.
    #[inline]
    pub(super) fn has(&self, n: usize) -> bool {
        self.buf.len() - self.pos >= n
    }

    /// The position in the data of the next byte to read.
    pub(super) fn position(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Makes at least `n` bytes available at the position; `false` when
    /// the data ends first (with none left: at a record's start; else the
    /// caller's error).
    #[cold]
    pub(super) fn fill(&mut self, input: &impl ReadAt, unzip: &mut Unzipper, n: usize) -> Result<bool, Problem> {
        loop {
            if self.has(n) {
                return Ok(true);
            }
            self.base += self.pos as u64;
            self.buf.drain(..self.pos);
            self.pos = 0;
            if self.plain.1 > 0 {
                let (offset, left) = self.plain;
                let take = left.min(CHUNK.max(n) as u64) as usize;
                let before = self.buf.len();
                self.buf.resize(before + take, 0);
                self.at = offset;
                let got = read_fully(input, &mut self.buf[before..], offset)?;
                if got < take {
                    return Err((offset, "the file ends inside a data block: it is truncated".into()));
                }
                self.plain = (offset + take as u64, left - take as u64);
                continue;
            }
            let Some(&fragment) = self.fragments.get(self.next_fragment) else {
                return Ok(false);
            };
            self.next_fragment += 1;
            match fragment {
                Fragment::Plain(offset, len) => self.plain = (offset, len),
                Fragment::Zipped(at) => {
                    self.at = at;
                    unzip_block(input, at, self.kind, unzip, &mut self.buf)?;
                }
            }
        }
    }

    /// Skips `n` bytes, in chunks (a skipped value may be long); `false`
    /// when the data ends first.
    pub(super) fn skip(&mut self, input: &impl ReadAt, unzip: &mut Unzipper, mut n: u64) -> Result<bool, Problem> {
        while n > 0 {
            let take = n.min(CHUNK as u64) as usize;
            let there = take.min(self.buf.len() - self.pos);
            if there == 0 && !self.fill(input, unzip, 1)? {
                return Ok(false);
            }
            let there = take.min(self.buf.len() - self.pos);
            self.pos += there;
            n -= there as u64;
        }
        Ok(true)
    }
}

/// Adds the data blocks reached from `at` (`kind`, DZ, DL, HL) to `out`.
fn fragments_of(
    input: &impl ReadAt,
    at: u64,
    kind: [u8; 2],
    out: &mut Vec<Fragment>,
    depth: usize,
) -> Result<(), Problem> {
    if at == 0 {
        return Ok(());
    }
    if depth > 2 {
        return Err((at, "data lists nest too deep; the file is damaged".into()));
    }
    let mut header = [0u8; 4];
    read_exact_at(input, &mut header, at)?;
    let plain = [b'#', b'#', kind[0], kind[1]];
    match &header {
        h if *h == plain => {
            let block = read_block(input, at, &plain, u64::MAX)?;
            out.push(Fragment::Plain(block.data_at, block.length - 24));
        }
        b"##DZ" => out.push(Fragment::Zipped(at)),
        b"##HL" => {
            let block = read_block(input, at, b"##HL", MAX_META_BLOCK)?;
            fragments_of(input, block.links.first().copied().unwrap_or(0), kind, out, depth + 1)?;
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
                    fragments_of(input, link, kind, out, depth + 1)?;
                }
                next = block.links.first().copied().unwrap_or(0);
            }
        }
        other => {
            return Err((
                at,
                format!(
                    "expected a data block ({}, DZ, DL or HL), found {:?}",
                    String::from_utf8_lossy(&kind),
                    String::from_utf8_lossy(other)
                ),
            ))
        }
    }
    Ok(())
}

/// Appends the bytes of the DZ block at `at`, which must hold a `kind`
/// block, to `out`.
fn unzip_block(
    input: &impl ReadAt,
    at: u64,
    kind: [u8; 2],
    unzip: &mut Unzipper,
    out: &mut Vec<u8>,
) -> Result<(), Problem> {
    let block = read_block(input, at, b"##DZ", u64::MAX)?;
    let mut head = [0u8; 24];
    read_exact_at(input, &mut head, block.data_at)?;
    let (original, zip_type) = ([head[0], head[1]], head[2]);
    let parameter = u32::from_le_bytes(head[4..8].try_into().unwrap_or_default()) as usize;
    let original_size = u64::from_le_bytes(head[8..16].try_into().unwrap_or_default());
    let zipped_size = u64::from_le_bytes(head[16..24].try_into().unwrap_or_default());
    if original != kind {
        return Err((
            at,
            format!(
                "the DZ block holds a {:?} block, not {}",
                String::from_utf8_lossy(&original),
                String::from_utf8_lossy(&kind)
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
    let Unzipper { inflate, zipped } = unzip;
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
