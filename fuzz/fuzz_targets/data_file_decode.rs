//! Decoding a data file (parquet or ORC, read whole as scans and compactions read them) from arbitrary
//! bytes must return batches or a corrupt error, never panic or abort.
#![no_main]

use libfuzzer_sys::fuzz_target;
use strata_format::{open_file, FileFormat, ReadRequest};
use strata_io::{FileIO, MemoryFileIO};
use strata_spec::DataType;

/// libfuzzer-sys aborts in its panic hook, before `catch_unwind` can run: a panic Strata contains at a
/// decoder boundary would count as a crash. A silent hook lets containment work; a panic that escapes
/// still reaches libfuzzer-sys's own `catch_unwind` around the target, which reports it.
fn contain_panics_like_strata() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| std::panic::set_hook(Box::new(|_| {})));
}

fuzz_target!(|data: &[u8]| {
    contain_panics_like_strata();
    let io = MemoryFileIO::new();
    let columns = vec![
        ("_KEY_id".to_string(), DataType::bigint()),
        ("_SEQUENCE_NUMBER".to_string(), DataType::bigint()),
        ("_VALUE_KIND".to_string(), DataType::nullable(strata_spec::TypeRoot::TinyInt)),
        ("name".to_string(), DataType::string()),
    ];
    for (path, format) in [("/t/data.parquet", FileFormat::Parquet), ("/t/data.orc", FileFormat::Orc)] {
        if io.write(path, data).is_err() {
            return;
        }
        let req = ReadRequest {
            columns: columns.clone(),
            dv: None,
            with_positions: true,
            batch_size: 256,
            prune: None,
            select: None,
            mapping: None,
        };
        if let Ok(batches) = open_file(&io, path, format, &req) {
            for batch in batches {
                if batch.is_err() {
                    break;
                }
            }
        }
    }
});
