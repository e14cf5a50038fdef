//! Reading a DV index file with arbitrary ranges must return errors, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use strata_io::{FileIO, MemoryFileIO};
use strata_spec::DeletionVectorMeta;

fuzz_target!(|data: &[u8]| {
    if data.len() < 12 {
        return;
    }
    let offset = i32::from_le_bytes([data[0], data[1], data[2], data[3]]);
    let length = i32::from_le_bytes([data[4], data[5], data[6], data[7]]);
    let cardinality = i32::from_le_bytes([data[8], data[9], data[10], data[11]]);
    let io = MemoryFileIO::new();
    io.write("/index", &data[12..]).expect("memory write");
    let meta = DeletionVectorMeta {
        data_file_name: "f".into(),
        offset,
        length,
        cardinality: if cardinality < 0 { None } else { Some(i64::from(cardinality)) },
    };
    let _ = strata_dv::read_deletion_vector(&io, "/index", &meta);
    let _ = strata_dv::read_all_deletion_vectors(&io, "/index", &[meta.clone(), DeletionVectorMeta { offset: 1, ..meta }]);
});
