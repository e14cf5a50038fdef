//! The data and changelog files a bucket's writer and its compactions write: names and writers.

use std::sync::Arc;

use strata_format::{KeyValueLayout, KvFileWriter, WriterConfig};
use strata_io::{join, FileIO};
use strata_spec::{DataFileMeta, FileSource};

use crate::options::WriterOptions;

/// Makes the bucket's data-file writers (names from the writer's prefix and counter); cloneable into a
/// compaction thread.
#[derive(Clone)]
pub(crate) struct FileFactory {
    pub(crate) io: Arc<dyn FileIO>,
    pub(crate) layout: Arc<KeyValueLayout>,
    pub(crate) bucket_dir: String,
    /// `<uuid>-`: what names this writer's files apart from other writers'.
    pub(crate) prefix: String,
    pub(crate) counter: Arc<std::sync::atomic::AtomicU64>,
}

impl FileFactory {
    /// A writer of data files (`data-<uuid>-<n>`) at `level`.
    pub(crate) fn writer(&self, opts: &WriterOptions, level: i32, source: FileSource) -> KvFileWriter {
        self.named_writer("data-", opts, level, source)
    }

    /// A writer of changelog files (`changelog-<uuid>-<n>`), as Paimon names them, recorded at `level`: 0 for a
    /// write's input changelog, the output level for what a compaction produces (Paimon's
    /// `createRollingChangelogFileWriter(outputLevel)`). Paimon's incremental reads of deletion-vector tables
    /// before 2.0 skip level-0 files, changelog files included (Paimon #8712), so a compaction's changelog
    /// recorded at level 0 would be invisible to them.
    pub(crate) fn changelog_writer(&self, opts: &WriterOptions, level: i32) -> KvFileWriter {
        self.named_writer("changelog-", opts, level, FileSource::Append)
    }

    fn named_writer(&self, kind: &str, opts: &WriterOptions, level: i32, source: FileSource) -> KvFileWriter {
        let prefix = format!("{kind}{}", self.prefix);
        let ext = opts.format.extension();
        let counter = self.counter.clone();
        KvFileWriter::new(
            self.io.clone(),
            self.bucket_dir.clone(),
            Box::new(move || format!("{prefix}{}.{ext}", counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed))),
            self.layout.clone(),
            WriterConfig {
                format: opts.format,
                compression: opts.compression_at(level),
                target_file_size: opts.target_file_size,
                schema_id: opts.schema_id,
                level,
                file_source: source,
            },
        )
        .with_row_group_bytes(opts.row_group_bytes)
    }

    pub(crate) fn path(&self, f: &DataFileMeta) -> String {
        join(&self.bucket_dir, &f.file_name)
    }
}

/// Removes files nothing references (best effort: an unreferenced file is an orphan that `strata clean`
/// removes later).
pub(crate) fn remove_files(io: &Arc<dyn FileIO>, paths: &[String]) {
    for p in paths {
        let _ = io.delete(p);
    }
}
