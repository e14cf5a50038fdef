//! Writing data files: the rolling key-value writer, the sink that checksums its bytes, the dictionary
//! decision and the column statistics recorded in the manifest.

pub(crate) mod checksummed_sink;
pub(crate) mod dictionary;
pub(crate) mod stats;
pub(crate) mod writer;
