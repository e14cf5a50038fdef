//! Block checksums of a parquet file's data pages, so that a read fetching only some pages (a point lookup,
//! a filtered scan) checks what it decodes.
//!
//! Strata's footer entry [`BLOCK_CRC_KEY`] records the CRC32 of every fixed-size block of the file from its
//! first byte to the end of its last column chunk (the magic and every page; not the page indexes and the
//! footer after them, which the decoder parses and bounds-checks). Its value is
//! `<block bytes>:<data end>:<hex CRC32s, 8 characters each, no separator>`. A ranged read widens each fetch
//! to whole blocks and checks them before the decoder sees a byte. Column-chunk CRCs
//! ([`crate::integrity::verify::CHUNK_CRC_KEY`]) stay beside it for reads of whole files. Paimon's readers ignore
//! footer keys they do not know; parquet's own page CRCs are not written by the parquet crate.

use std::fmt::Write as _;
use std::ops::Range;

use parquet::file::metadata::ParquetMetaData;
use strata_spec::{Error, Result};

/// Footer key-value metadata key of the block checksums.
pub(crate) const BLOCK_CRC_KEY: &str = "strata.block-crc32";

/// Block size Strata writes: a page read is widened by half a block on each side on average, and the
/// footer holds 8 characters per block (a 32 MB file: 8 KB).
const BLOCK_BYTES: u64 = 32 << 10;

/// Smallest and largest block size a footer may declare (a crafted size must not make a read fetch the whole
/// file per page or the footer hold a checksum per byte).
const BLOCK_RANGE: Range<u64> = (4 << 10)..(16 << 20) + 1;

/// The [`BLOCK_CRC_KEY`] value for a file whose bytes up to the end of its last column chunk are `data`.
#[cfg(test)]
pub(crate) fn block_crcs(data: &[u8]) -> String {
    let mut crcs = BlockCrcBuilder::default();
    crcs.update(data);
    crcs.finish()
}

/// The [`BLOCK_CRC_KEY`] value of a file's data taken as its bytes go out, one block at a time.
pub(crate) struct BlockCrcBuilder(strata_io::BlockCrc32s);

impl Default for BlockCrcBuilder {
    fn default() -> Self {
        BlockCrcBuilder(strata_io::BlockCrc32s::new(BLOCK_BYTES))
    }
}

impl BlockCrcBuilder {
    /// Takes in the next bytes of the data.
    pub(crate) fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }

    /// The entry for the data seen: `<block bytes>:<data end>:<CRCs>`.
    pub(crate) fn finish(self) -> String {
        let len = self.0.len();
        let crcs = self.0.finish();
        let mut out = format!("{BLOCK_BYTES}:{len}:");
        out.reserve(crcs.len() * 8);
        for crc in crcs {
            // Writing to a String cannot fail.
            let _ = write!(out, "{crc:08x}");
        }
        out
    }
}

/// A file's block checksums, parsed from its footer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BlockCrcs {
    block: u64,
    /// Bytes covered: `0..end`.
    end: u64,
    crcs: Vec<u32>,
}

impl BlockCrcs {
    /// The checksums `meta`'s footer records, `None` when it records none (another writer's file, or one
    /// Strata wrote before block checksums). A malformed entry, or one covering more than the file's
    /// `len` bytes, is a corrupt file.
    pub(crate) fn from_metadata(meta: &ParquetMetaData, len: u64, path: &str) -> Result<Option<Self>> {
        let Some(value) = crate::integrity::verify::footer_value(meta, BLOCK_CRC_KEY) else {
            return Ok(None);
        };
        Self::from_value(value, len, path).map(Some)
    }

    /// The checksums of entry `value` (an ORC footer's, [`crate::integrity::orc_crc`]) of a `len`-byte file at `path`.
    pub(crate) fn from_value(value: &str, len: u64, path: &str) -> Result<Self> {
        Self::parse(value, len).map_err(|m| Error::corrupt_file(path.to_string(), m))
    }

    fn parse(value: &str, len: u64) -> std::result::Result<Self, String> {
        let bad = |what: &str| format!("footer entry {BLOCK_CRC_KEY}: {what}");
        let mut parts = value.splitn(3, ':');
        let mut number = |what: &str| -> std::result::Result<u64, String> {
            parts.next().and_then(|p| p.parse::<u64>().ok()).ok_or_else(|| bad(&format!("no {what}")))
        };
        let (block, end) = (number("block size")?, number("data end")?);
        let hex = parts.next().ok_or_else(|| bad("no checksums"))?;
        if !BLOCK_RANGE.contains(&block) {
            return Err(bad(&format!("block size {block}")));
        }
        if end > len {
            return Err(bad(&format!("covers {end} bytes of a {len}-byte file")));
        }
        let blocks = end.div_ceil(block);
        if hex.len() as u64 != blocks * 8 {
            return Err(bad(&format!("{} checksum characters for {blocks} blocks", hex.len())));
        }
        let crcs = hex
            .as_bytes()
            .chunks(8)
            .map(|c| std::str::from_utf8(c).ok().and_then(|s| u32::from_str_radix(s, 16).ok()))
            .collect::<Option<Vec<u32>>>()
            .ok_or_else(|| bad("a checksum is not hexadecimal"))?;
        Ok(BlockCrcs { block, end, crcs })
    }

    /// [`Self::parse`] for other modules' tests.
    #[cfg(test)]
    #[allow(clippy::unwrap_used)]
    pub(crate) fn parse_for_test(value: &str, len: u64) -> Self {
        Self::parse(value, len).unwrap()
    }

    /// Bytes covered from the file's start.
    pub(crate) fn block_size(&self) -> u64 {
        self.block
    }

    pub(crate) fn end(&self) -> u64 {
        self.end
    }

    /// `range` widened to whole blocks where it overlaps the covered bytes (what a fetch must read for its
    /// bytes to be checked); the part past [`Self::end`] stays as asked.
    pub(crate) fn widen(&self, range: Range<u64>) -> Range<u64> {
        if range.start >= self.end || range.start >= range.end {
            return range;
        }
        let start = range.start / self.block * self.block;
        let covered_end = range.end.min(self.end).div_ceil(self.block).saturating_mul(self.block).min(self.end);
        start..range.end.max(covered_end)
    }

    /// The part of a piece `start..start + len` that can be checked and kept: from its first block boundary to
    /// its last (or to its end where it reaches past the covered bytes). `None`: no whole block.
    pub(crate) fn whole_blocks(&self, start: u64, len: u64) -> Option<Range<u64>> {
        let end = start.checked_add(len)?;
        if start >= self.end {
            return Some(start..end);
        }
        let from = start.div_ceil(self.block).saturating_mul(self.block);
        let to = if end >= self.end { end } else { end / self.block * self.block };
        (from < to).then_some(from..to)
    }

    /// Checks `bytes`, which start at `start`, a block boundary, and cover whole blocks up to their end or
    /// to [`Self::end`].
    pub(crate) fn check(&self, start: u64, bytes: &[u8], path: &str) -> Result<()> {
        let corrupt = |message: String| Error::corrupt_file(path.to_string(), message);
        if start >= self.end {
            return Ok(());
        }
        if !start.is_multiple_of(self.block) {
            return Err(corrupt(format!("a checked read starts at {start}, inside a block")));
        }
        let covered = usize::try_from((self.end - start).min(bytes.len() as u64)).unwrap_or(bytes.len());
        for (i, block) in bytes[..covered].chunks(self.block as usize).enumerate() {
            let at = start / self.block + i as u64;
            let whole = block.len() as u64 == self.block || at * self.block + block.len() as u64 == self.end;
            if !whole {
                return Err(corrupt(format!("a checked read ends inside block {at}")));
            }
            let expected = usize::try_from(at).ok().and_then(|a| self.crcs.get(a)).copied();
            let got = crc32fast::hash(block);
            if expected != Some(got) {
                return Err(corrupt(format!(
                    "bytes {}..{}: checksum {got:08x} where the footer records {}",
                    at * self.block,
                    at * self.block + block.len() as u64,
                    expected.map_or("none".to_string(), |e| format!("{e:08x}"))
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn data(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 31 % 251) as u8).collect()
    }

    #[test]
    fn entries_round_trip_and_check_whole_blocks() {
        let d = data(100_000);
        let crcs = BlockCrcs::parse(&block_crcs(&d), 120_000).unwrap();
        assert_eq!((crcs.block, crcs.end, crcs.crcs.len()), (BLOCK_BYTES, 100_000, 4));
        crcs.check(0, &d, "f").unwrap();
        let b = BLOCK_BYTES as usize;
        crcs.check(BLOCK_BYTES, &d[b..2 * b], "f").unwrap();
        // The last block is short; bytes past the covered end (the footer) are not checked.
        let mut with_footer = d[3 * b..].to_vec();
        with_footer.extend_from_slice(b"footer");
        crcs.check(3 * BLOCK_BYTES, &with_footer, "f").unwrap();
        crcs.check(100_000, b"footer", "f").unwrap();
    }

    #[test]
    fn a_flipped_byte_or_a_misaligned_read_is_corrupt() {
        let d = data(70_000);
        let crcs = BlockCrcs::parse(&block_crcs(&d), 70_000).unwrap();
        for at in [0, 4, 32_767, 32_768, 69_999] {
            let mut bad = d.clone();
            bad[at] ^= 1;
            let e = crcs.check(0, &bad, "f").unwrap_err();
            assert!(matches!(e, Error::Corrupt { .. }), "{at}: {e}");
        }
        assert!(crcs.check(1, &d[1..], "f").is_err(), "not at a block boundary");
        assert!(crcs.check(0, &d[..1000], "f").is_err(), "ends inside a block");
    }

    #[test]
    fn widening_reaches_block_boundaries_and_stops_at_the_covered_end() {
        let crcs = BlockCrcs::parse(&block_crcs(&data(100_000)), 200_000).unwrap();
        let b = BLOCK_BYTES;
        assert_eq!(crcs.widen(10..20), 0..b);
        assert_eq!(crcs.widen(b..b + 1), b..2 * b);
        assert_eq!(crcs.widen(b - 1..b + 1), 0..2 * b);
        assert_eq!(crcs.widen(99_000..99_500), 3 * b..100_000);
        assert_eq!(crcs.widen(99_000..150_000), 3 * b..150_000, "past the covered end as asked");
        assert_eq!(crcs.widen(120_000..130_000), 120_000..130_000, "the footer is not widened");
        assert_eq!(crcs.whole_blocks(10, 2 * b), Some(b..2 * b));
        assert_eq!(crcs.whole_blocks(10, 100), None);
        assert_eq!(crcs.whole_blocks(90_000, 20_000), Some(3 * b..110_000));
        assert_eq!(crcs.whole_blocks(150_000, 10), Some(150_000..150_010));
    }

    #[test]
    fn malformed_entries_are_rejected() {
        let good = block_crcs(&data(40_000));
        for (value, len) in [
            ("", 40_000),
            ("32768", 40_000),
            ("32768:40000", 40_000),
            ("1:40000:", 40_000),
            ("32768:40000:abc", 40_000),
            ("32768:40000:zzzzzzzzzzzzzzzz", 40_000),
            ("99999999999999999999:1:00000000", 40_000),
            (good.as_str(), 39_999),
        ] {
            assert!(BlockCrcs::parse(value, len).is_err(), "{value:?} accepted");
        }
        // A multi-byte character must not split a checksum (a panic on a char boundary).
        assert!(BlockCrcs::parse("32768:40000:é0000000000000a", 40_000).is_err());
    }
}
