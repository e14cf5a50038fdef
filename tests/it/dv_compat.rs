//! Deletion vectors cross-checked with pypaimon 2.1.0 (32-bit) and pyroaring's portable 64-bit format, which
//! is Iceberg's deletion-vector-v1 layout.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeSet;

use base64::Engine;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use strata::dv::{decode_entry, write_index_file, DeletionVector};
use strata::LocalFileIO;

fn oracle_file(cmd: &str, spec: Value) -> Value {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), spec.to_string()).unwrap();
    common::oracle(&[cmd, file.path().to_str().unwrap()])
}

fn b64(s: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD.decode(s.as_str().unwrap()).unwrap()
}

fn random_sets(rng: &mut StdRng, max: u64) -> Vec<BTreeSet<u64>> {
    let mut sets =
        vec![BTreeSet::new(), BTreeSet::from([0]), (0..70_000).collect(), (1000..1010).chain(65_530..65_545).collect()];
    for _ in 0..12 {
        let n = rng.random_range(1..2_000);
        let spread = [100u64, 100_000, max][rng.random_range(0..3)];
        sets.push((0..n).map(|_| rng.random_range(0..spread.min(max))).collect());
    }
    sets
}

fn to_set(v: &Value) -> BTreeSet<u64> {
    v.as_array().unwrap().iter().map(|p| p.as_u64().unwrap()).collect()
}

#[test]
fn pypaimon_reads_strata_index_files_and_strata_reads_pypaimon_entries() {
    let mut rng = StdRng::seed_from_u64(1);
    let sets = random_sets(&mut rng, i32::MAX as u64);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index-strata-0");
    let path = path.to_str().unwrap();
    let dvs: Vec<(String, DeletionVector)> = sets
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut dv = DeletionVector::new(false);
            for &p in s {
                dv.delete(p).unwrap();
            }
            (format!("data-{i}.parquet"), dv)
        })
        .collect();
    let (_, metas) = write_index_file(&LocalFileIO::new(), path, dvs.iter().map(|(n, d)| (n.as_str(), d))).unwrap();
    let entries: Vec<Value> =
        metas.iter().map(|m| json!({"offset": m.offset, "length": m.length, "cardinality": m.cardinality})).collect();
    let read = oracle_file("dv_read", json!({"path": path, "entries": entries}));
    let read = read.as_array().unwrap();
    assert_eq!(read.len(), sets.len());
    for (got, want) in read.iter().zip(&sets) {
        assert_eq!(&to_set(got), want);
    }

    // The reverse: entries pypaimon serializes decode in Strata to the same positions.
    let lists: Vec<Vec<u64>> = sets.iter().map(|s| s.iter().copied().collect()).collect();
    let written = oracle_file("dv_write", json!({"positions": lists}));
    for (entry, want) in written.as_array().unwrap().iter().zip(&sets) {
        let bytes = b64(entry);
        let len = i32::from_be_bytes(bytes[..4].try_into().unwrap());
        let dv = decode_entry(&bytes, len).unwrap();
        assert_eq!(&dv.positions().collect::<BTreeSet<_>>(), want);
    }
}

#[test]
fn bitmap64_entries_match_the_portable_64_bit_layout() {
    let mut rng = StdRng::seed_from_u64(2);
    let mut sets = random_sets(&mut rng, 1 << 40);
    sets.push([(1u64 << 31) - 1, 1 << 31, (1 << 32) + 5, (1 << 40) + 7, 1 << 62].into());
    // Strata's payload (after the 4-byte little-endian magic) is what pyroaring's BitMap64 reads.
    let mut payloads = Vec::new();
    for s in &sets {
        let mut dv = DeletionVector::new(true);
        for &p in s {
            dv.delete(p).unwrap();
        }
        let (entry, len) = dv.serialize_entry().unwrap();
        assert_eq!(len as usize, entry.len(), "64-bit entries record their whole length");
        assert_eq!(&entry[4..8], &1_681_511_377u32.to_le_bytes());
        let payload = &entry[8..entry.len() - 4];
        payloads.push(base64::engine::general_purpose::STANDARD.encode(payload));
    }
    let lists: Vec<Vec<u64>> = sets.iter().map(|s| s.iter().copied().collect()).collect();
    let res = oracle_file("bitmap64", json!({"decode": payloads, "encode": lists}));
    for (got, want) in res["decoded"].as_array().unwrap().iter().zip(&sets) {
        assert_eq!(&to_set(got), want);
    }
    // And pyroaring's bytes, framed as a Paimon entry, decode in Strata.
    for (bytes, want) in res["encoded"].as_array().unwrap().iter().zip(&sets) {
        let mut payload = 1_681_511_377u32.to_le_bytes().to_vec();
        payload.extend(b64(bytes));
        let mut entry = (payload.len() as i32).to_be_bytes().to_vec();
        entry.extend(&payload);
        entry.extend(crc32(&payload).to_be_bytes());
        let dv = decode_entry(&entry, entry.len() as i32).unwrap();
        assert_eq!(&dv.positions().collect::<BTreeSet<_>>(), want);
    }
}

fn crc32(bytes: &[u8]) -> u32 {
    // Bitwise CRC-32 (IEEE), independent of the crate Strata uses.
    let mut crc = 0xffff_ffffu32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xedb8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

#[test]
fn a_committed_dv_index_file_is_restored_by_strata_and_read_by_pypaimon() {
    use common::fixtures::{append, create_table, file};
    use std::sync::Arc;
    use strata::spec::BinaryRow;
    use strata::table::{CommitMessage, Committable};

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wh/db.db/t");
    let path = path.to_str().unwrap();
    let table = create_table(Arc::new(LocalFileIO::new()), path, 1, &[("deletion-vectors.enabled", "true")]);
    let commit = table.new_commit("w").unwrap();
    let f = file("data-l1.parquet", 5, 0, 99, 100);
    commit.commit(&append(1, 0, 1, vec![f])).unwrap();
    let s1 = table.snapshot(None).unwrap().unwrap();
    let mut m = table.dv_maintainer(Some(&s1), &BinaryRow::empty(), 0).unwrap();
    for p in [3u64, 17, 99] {
        m.notify_new_deletion("data-l1.parquet", p).unwrap();
    }
    let name = table.path_factory().new_index_file_name();
    let change = m.write_index_file(table.io().as_ref(), &table.path_factory().index_dir(), &name).unwrap().unwrap();
    commit
        .commit(&Committable {
            identifier: 2,
            messages: vec![CommitMessage::new(
                BinaryRow::empty(),
                0,
                1,
                strata::lsm::CompactIncrement { new_index_files: vec![change.new_file], ..Default::default() }.into(),
            )],
            ..Default::default()
        })
        .unwrap();
    let s2 = table.snapshot(None).unwrap().unwrap();
    let restored = table.dv_maintainer(Some(&s2), &BinaryRow::empty(), 0).unwrap();
    let dv = restored.deletion_vector_of("data-l1.parquet").unwrap();
    assert_eq!(dv.positions().collect::<Vec<_>>(), vec![3, 17, 99]);
    let files = table.deletion_files(&s2).unwrap();
    let df = files.values().next().unwrap();
    let read = oracle_file(
        "dv_read",
        json!({"path": df.path, "entries": [{"offset": df.meta.offset, "length": df.meta.length, "cardinality": df.meta.cardinality}]}),
    );
    assert_eq!(read, json!([[3, 17, 99]]));
    // The old snapshot still has no vectors.
    assert!(table
        .dv_maintainer(Some(&s1), &BinaryRow::empty(), 0)
        .unwrap()
        .deletion_vector_of("data-l1.parquet")
        .is_none());
}
