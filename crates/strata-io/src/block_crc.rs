//! CRC32s of the fixed-size blocks of a stream, taken as its bytes pass: the local copies of
//! [`crate::CachingFileIO`] and the block checksums Strata records in its parquet footers both use them.

/// The CRC32 of every `block`-byte block of the bytes seen so far (the last block may be short).
pub struct BlockCrc32s {
    block: u64,
    len: u64,
    crcs: Vec<u32>,
    current: crc32fast::Hasher,
}

impl BlockCrc32s {
    /// Checksums of blocks of `block` bytes (at least one).
    pub fn new(block: u64) -> Self {
        BlockCrc32s { block: block.max(1), len: 0, crcs: Vec::new(), current: crc32fast::Hasher::new() }
    }

    /// Takes in the next bytes.
    pub fn update(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            let room = usize::try_from(self.block - self.len % self.block).unwrap_or(usize::MAX);
            let (head, rest) = data.split_at(room.min(data.len()));
            self.current.update(head);
            self.len += head.len() as u64;
            if self.len.is_multiple_of(self.block) {
                self.crcs.push(std::mem::take(&mut self.current).finalize());
            }
            data = rest;
        }
    }

    /// Bytes seen.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether no byte was seen.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The blocks' checksums, the short last block's included.
    pub fn finish(mut self) -> Vec<u32> {
        if !self.len.is_multiple_of(self.block) {
            self.crcs.push(self.current.finalize());
        }
        self.crcs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_of_any_size_give_the_blocks_checksums() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let want: Vec<u32> = data.chunks(1000).map(crc32fast::hash).collect();
        for piece in [1, 7, 999, 1000, 1001, 10_000] {
            let mut crcs = BlockCrc32s::new(1000);
            data.chunks(piece).for_each(|p| crcs.update(p));
            assert_eq!(crcs.len(), 10_000);
            assert_eq!(crcs.finish(), want, "pieces of {piece}");
        }
        let mut short = BlockCrc32s::new(1000);
        short.update(&data[..1500]);
        assert_eq!(short.finish(), vec![want[0], crc32fast::hash(&data[1000..1500])]);
        assert!(BlockCrc32s::new(1000).finish().is_empty());
    }
}
