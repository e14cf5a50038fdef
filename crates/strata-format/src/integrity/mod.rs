//! Whether a file holds what was written: block checksums of parquet pages, the checksums of ORC files,
//! and the checks of a file's rows (column-chunk CRCs, key order, retractions).

pub(crate) mod block_crc;
pub(crate) mod orc_crc;
pub(crate) mod verify;
