//! MF4 blocks read from a source at an offset: the block header (kind,
//! length, links) checked against the bounds a damaged file may not pass,
//! its data, and TX texts. Every error names the byte offset at fault.

use std::fs::File;
use std::io;

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
pub(super) const MAX_META_BLOCK: u64 = 1 << 20;
/// The largest DL block read (bytes: 2 million data blocks).
pub(super) const MAX_LIST_BLOCK: u64 = 16 << 20;
/// The most blocks followed along any chain (groups, channels, lists).
pub(super) const MAX_CHAIN: usize = 100_000;

/// What is wrong, and where (a byte offset).
pub(super) type Problem = (u64, String);

/// A block's header and links.
pub(super) struct Block {
    pub(super) length: u64,
    pub(super) links: Vec<u64>,
    /// Where its data starts.
    pub(super) data_at: u64,
}

/// Reads until `buf` is full or the input ends; how many bytes came.
pub(super) fn read_fully(input: &impl ReadAt, buf: &mut [u8], offset: u64) -> Result<usize, Problem> {
    let mut got = 0;
    while got < buf.len() {
        match input.read_at(&mut buf[got..], offset + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err((offset + got as u64, format!("cannot read: {e}"))),
        }
    }
    Ok(got)
}

/// Fills `buf` from `offset`, or says the file is truncated there.
pub(super) fn read_exact_at(input: &impl ReadAt, buf: &mut [u8], offset: u64) -> Result<(), Problem> {
    if read_fully(input, buf, offset)? < buf.len() {
        return Err((offset, "the file ends inside a block: it is truncated".into()));
    }
    Ok(())
}

/// The block at `at`, which must be of kind `id` (`##` and two letters;
/// `##D?` accepts any data block), at most `max` bytes long.
pub(super) fn read_block(input: &impl ReadAt, at: u64, id: &[u8; 4], max: u64) -> Result<Block, Problem> {
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
pub(super) fn block_data(input: &impl ReadAt, block: &Block, n: usize) -> Result<Vec<u8>, Problem> {
    let len = (block.length - (block.data_at - block_start(block))).min(n as u64) as usize;
    let mut data = vec![0u8; len];
    read_exact_at(input, &mut data, block.data_at)?;
    Ok(data)
}

/// Where a block starts.
pub(super) fn block_start(block: &Block) -> u64 {
    block.data_at - 24 - 8 * block.links.len() as u64
}

/// The text of the TX block at `at` (empty for none).
pub(super) fn read_text(input: &impl ReadAt, at: u64) -> Result<String, Problem> {
    if at == 0 {
        return Ok(String::new());
    }
    let block = read_block(input, at, b"##TX", MAX_META_BLOCK)?;
    let data = block_data(input, &block, 4096)?;
    let end = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    Ok(String::from_utf8_lossy(&data[..end]).into_owned())
}
