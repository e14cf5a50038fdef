//! The bloom filter of a local lookup file's keys.

use arrow_array::{Array, BinaryArray};

/// A bloom filter over a file's keys: a miss answers a lookup without loading the file's index.
pub(crate) struct Bloom {
    bits: Vec<u64>,
    hashes: u32,
}

impl Bloom {
    /// Bytes the filter holds.
    pub(crate) fn memory_size(&self) -> u64 {
        (self.bits.len() * 8) as u64
    }

    /// A filter over `keys` (arrow-row bytes) with false-positive rate `fpp` (clamped to 1e-6..0.5).
    pub(crate) fn new(keys: &BinaryArray, fpp: f64) -> Self {
        let n = keys.len().max(1) as f64;
        let fpp = fpp.clamp(1e-6, 0.5);
        let m = (-(n * fpp.ln()) / (std::f64::consts::LN_2 * std::f64::consts::LN_2)).ceil().max(64.0) as usize;
        let hashes = ((m as f64 / n) * std::f64::consts::LN_2).round().clamp(1.0, 16.0) as u32;
        let mut b = Bloom { bits: vec![0; m.div_ceil(64)], hashes };
        for k in keys.iter().flatten() {
            b.insert(k);
        }
        b
    }

    /// Two hashes of the key (FNV-1a, then a SplitMix64 finalizer of it), combined as h1 + i * h2
    /// (Kirsch and Mitzenmacher).
    fn hashes(key: &[u8]) -> (u64, u64) {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in key {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        let mut z = h.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (h, (z ^ (z >> 31)) | 1)
    }

    fn insert(&mut self, key: &[u8]) {
        let (h1, h2) = Self::hashes(key);
        let m = (self.bits.len() * 64) as u64;
        for i in 0..u64::from(self.hashes) {
            let bit = h1.wrapping_add(i.wrapping_mul(h2)) % m;
            self.bits[(bit / 64) as usize] |= 1 << (bit % 64);
        }
    }

    /// False when `key` is certainly not among the keys.
    pub(crate) fn may_contain(&self, key: &[u8]) -> bool {
        let (h1, h2) = Self::hashes(key);
        let m = (self.bits.len() * 64) as u64;
        (0..u64::from(self.hashes)).all(|i| {
            let bit = h1.wrapping_add(i.wrapping_mul(h2)) % m;
            self.bits[(bit / 64) as usize] & (1 << (bit % 64)) != 0
        })
    }
}
