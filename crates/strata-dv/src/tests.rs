use std::collections::BTreeSet;
use std::sync::Arc;

use proptest::prelude::*;
use strata_io::{FileIO, MemoryFileIO};
use strata_spec::{DeletionVectorMeta, ErrorKind};

use super::*;
use crate::index_file::INDEX_VERSION;

fn dv_of(positions: &BTreeSet<u64>, bitmap64: bool) -> DeletionVector {
    let mut dv = DeletionVector::new(bitmap64);
    for &p in positions {
        dv.delete(p).unwrap();
    }
    dv
}

fn positions32() -> impl Strategy<Value = BTreeSet<u64>> {
    prop_oneof![
        proptest::collection::btree_set(0u64..5_000, 0..300),
        proptest::collection::btree_set(0u64..=i32::MAX as u64, 0..300),
        (0u64..100_000, 1u64..70_000).prop_map(|(s, n)| (s..s + n).collect()),
    ]
}

fn positions64() -> impl Strategy<Value = BTreeSet<u64>> {
    prop_oneof![
        proptest::collection::btree_set(0u64..=i64::MAX as u64, 0..200),
        proptest::collection::btree_set((1u64 << 31)..(1u64 << 33), 0..200),
    ]
}

proptest! {
    #[test]
    fn entries_round_trip_32(positions in positions32()) {
        let dv = dv_of(&positions, false);
        let (entry, len) = dv.serialize_entry().unwrap();
        prop_assert_eq!(len as usize, entry.len() - 8);
        let back = decode_entry(&entry, len).unwrap();
        prop_assert_eq!(back.positions().collect::<BTreeSet<_>>(), positions);
    }

    #[test]
    fn entries_round_trip_64(positions in positions64()) {
        let dv = dv_of(&positions, true);
        let (entry, len) = dv.serialize_entry().unwrap();
        prop_assert_eq!(len as usize, entry.len());
        let back = decode_entry(&entry, len).unwrap();
        prop_assert_eq!(back.positions().collect::<BTreeSet<_>>(), positions);
    }

    #[test]
    fn index_files_round_trip(files in proptest::collection::vec((positions32(), any::<bool>()), 0..12)) {
        let io = MemoryFileIO::new();
        let dvs: Vec<(String, DeletionVector)> =
            files.iter().enumerate().map(|(i, (p, b64))| (format!("data-{i}.parquet"), dv_of(p, *b64))).collect();
        let (size, metas) = write_index_file(&io, "/i/index-0", dvs.iter().map(|(n, d)| (n.as_str(), d))).unwrap();
        prop_assert_eq!(size as u64, io.size("/i/index-0").unwrap());
        let all = read_all_deletion_vectors(&io, "/i/index-0", &metas).unwrap();
        prop_assert_eq!(all.len(), files.len());
        for ((name, dv), ((want_name, _), meta)) in all.iter().zip(dvs.iter().zip(&metas)) {
            prop_assert_eq!(name, want_name);
            let one = read_deletion_vector(&io, "/i/index-0", meta).unwrap();
            let want: BTreeSet<u64> = files[metas.iter().position(|m| m == meta).unwrap()].0.clone();
            prop_assert_eq!(dv.positions().collect::<BTreeSet<_>>(), want.clone());
            prop_assert_eq!(one.positions().collect::<BTreeSet<_>>(), want);
        }
    }

    #[test]
    fn merge_is_set_union(a in positions32(), b in positions32(), b64 in any::<bool>()) {
        let mut x = dv_of(&a, false);
        x.merge(&dv_of(&b, b64)).unwrap();
        let want: BTreeSet<u64> = a.union(&b).copied().collect();
        prop_assert_eq!(x.positions().collect::<BTreeSet<_>>(), want.clone());
        prop_assert_eq!(x.cardinality(), want.len() as u64);
        let mut y = dv_of(&a, true);
        y.merge(&dv_of(&b, b64)).unwrap();
        prop_assert_eq!(y.positions().collect::<BTreeSet<_>>(), want);
    }

    #[test]
    fn positions_from_are_the_positions_at_or_after_the_start(
        small in positions32(),
        wide in positions64(),
        pick in any::<prop::sample::Index>(),
        offset in 0u64..3,
    ) {
        for (positions, bitmap64) in [(&small, false), (&small, true), (&wide, true)] {
            let dv = dv_of(positions, bitmap64);
            // Starts at a position, next to one, before all and past all (beyond 32 bits too).
            let mut starts = vec![0, u64::from(u32::MAX) + 1, u64::MAX];
            if !positions.is_empty() {
                let at = *positions.iter().nth(pick.index(positions.len())).unwrap();
                starts.extend([at, at.saturating_sub(offset), at.saturating_add(offset)]);
            }
            for start in starts {
                let want: Vec<u64> = positions.range(start..).copied().collect();
                prop_assert_eq!(dv.positions_from(start).collect::<Vec<_>>(), want, "from {}", start);
            }
        }
    }

    #[test]
    fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200), len in any::<i32>()) {
        let _ = decode_entry(&bytes, len);
        let mut framed = Vec::from(&bytes.len().to_be_bytes()[4..]);
        framed.extend_from_slice(&bytes);
        let _ = decode_entry(&framed, bytes.len() as i32);
    }
}

fn corrupt(bytes: &[u8], len: i32) -> String {
    let e = decode_entry(bytes, len).expect_err("decoding should fail");
    assert_eq!(e.kind(), ErrorKind::Corrupt, "{e}");
    e.to_string()
}

#[test]
fn bad_entries_are_typed_errors() {
    let dv = dv_of(&BTreeSet::from([1, 5, 99]), false);
    let (entry, len) = dv.serialize_entry().unwrap();
    // Bad magic.
    let mut bad = entry.clone();
    bad[4] ^= 0xff;
    assert!(corrupt(&bad, len).contains("magic"));
    // Bad CRC.
    let mut bad = entry.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    assert!(corrupt(&bad, len).contains("CRC"));
    // Wrong recorded length.
    assert!(corrupt(&entry, len + 1).contains("length"));
    // Truncation anywhere.
    for cut in 0..entry.len() {
        corrupt(&entry[..cut], len);
    }
    // A 64-bit entry with the 32-bit length convention.
    let (e64, l64) = dv_of(&BTreeSet::from([1u64 << 40]), true).serialize_entry().unwrap();
    assert!(corrupt(&e64, l64 - 8).contains("length"));
    // A position above 2^31-1 smuggled into a 32-bit vector (valid CRC, valid bitmap).
    let mut bitmap = roaring::RoaringBitmap::new();
    bitmap.insert(u32::MAX - 1);
    let mut payload = bitmap32::MAGIC_NUMBER.to_be_bytes().to_vec();
    bitmap.serialize_into(&mut payload).unwrap();
    let framed = frame_entry(&payload).unwrap();
    assert!(corrupt(&framed, payload.len() as i32).contains("above"));
    // Trailing bytes inside the payload.
    let mut payload = dv.serialize_entry().unwrap().0[4..].to_vec();
    payload.truncate(payload.len() - 4);
    payload.push(0);
    let framed = frame_entry(&payload).unwrap();
    assert!(corrupt(&framed, payload.len() as i32).contains("trailing"));
}

#[test]
fn a_32_bit_vector_refuses_positions_above_2_31() {
    let mut dv = DeletionVector::new(false);
    let e = dv.delete(1 << 31).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid);
    dv.delete(i32::MAX as u64).unwrap();
    let mut dv64 = DeletionVector::new(true);
    dv64.delete(1 << 40).unwrap();
    assert!(dv64.is_deleted(1 << 40) && !dv64.is_deleted(1 << 39));
}

#[test]
fn index_file_checks_version_offsets_and_cardinality() {
    let io = MemoryFileIO::new();
    let dv = dv_of(&BTreeSet::from([3, 4]), false);
    let (_, metas) = write_index_file(&io, "/ix", [("a", &dv)]).unwrap();
    let mut bytes = io.read("/ix").unwrap();
    bytes[0] = 2;
    io.write("/ix2", &bytes).unwrap();
    let e = read_all_deletion_vectors(&io, "/ix2", &metas).unwrap_err();
    assert!(e.to_string().contains("version") && e.to_string().contains("/ix2"), "{e}");
    let mut wrong = metas.clone();
    wrong[0].cardinality = Some(3);
    assert!(read_all_deletion_vectors(&io, "/ix", &wrong).unwrap_err().to_string().contains("says 3"));
    wrong[0].offset = 999;
    assert_eq!(read_all_deletion_vectors(&io, "/ix", &wrong).unwrap_err().kind(), ErrorKind::Corrupt);
    assert!(read_deletion_vector(&io, "/ix", &wrong[0]).is_err());
    let m = DeletionVectorMeta { offset: -4, ..metas[0].clone() };
    assert_eq!(read_deletion_vector(&io, "/ix", &m).unwrap_err().kind(), ErrorKind::Corrupt);
}

#[test]
fn maintainer_writes_only_when_modified_and_empties_to_a_versioned_file() {
    let io: Arc<dyn FileIO> = Arc::new(MemoryFileIO::new());
    let mut m = BucketedDvMaintainer::new(false);
    assert!(m.write_index_file(io.as_ref(), "/t/index", "index-x-0").unwrap().is_none());
    assert!(m.notify_new_deletion("f1", 7).unwrap());
    assert!(!m.notify_new_deletion("f1", 7).unwrap());
    m.notify_new_deletion("f2", 1).unwrap();
    let first = m.write_index_file(io.as_ref(), "/t/index", "index-x-1").unwrap().unwrap();
    assert!(first.old_file.is_none());
    assert_eq!(first.new_file.row_count, 2);
    assert!(m.write_index_file(io.as_ref(), "/t/index", "index-x-2").unwrap().is_none());

    let mut restored = BucketedDvMaintainer::restore(
        io.as_ref(),
        Some((&first.new_file, &format!("/t/index/{}", first.new_file.file_name))),
        false,
    )
    .unwrap();
    assert!(restored.deletion_vector_of("f1").unwrap().is_deleted(7));
    restored.remove_deletion_vector_of("f1");
    restored.remove_deletion_vector_of("f2");
    let last = restored.write_index_file(io.as_ref(), "/t/index", "index-x-3").unwrap().unwrap();
    assert_eq!(last.old_file.unwrap().file_name, "index-x-1");
    assert_eq!(last.new_file.row_count, 0);
    assert_eq!(io.read("/t/index/index-x-3").unwrap(), vec![INDEX_VERSION]);
}

#[test]
fn sparse_deletes_cost_about_two_bytes_each() {
    // 1% of 10 million rows deleted, spread out: array containers, 2 bytes a position plus 8 bytes of header
    // per 65,536 rows.
    let positions: BTreeSet<u64> = (0..100_000u64).map(|i| i * 100 + (i * 7919) % 100).collect();
    let (entry, _) = dv_of(&positions, false).serialize_entry().unwrap();
    let per_row = entry.len() as f64 / positions.len() as f64;
    assert!(per_row <= 2.1, "{per_row} bytes per deleted row");
}

/// An append bucket's vectors in two index files: dropping a vector replaces only the file that held it
/// (its other vectors carried into the new file), a new vector joins that new file, the untouched file
/// stays, and the base names both files the change started from.
#[test]
fn append_maintainer_replaces_only_touched_index_files() {
    let io: Arc<dyn FileIO> = Arc::new(MemoryFileIO::new());
    let mut files = Vec::new();
    for (name, vectors) in [("index-a-0", vec!["f1", "f2"]), ("index-b-0", vec!["f3"])] {
        let mut m = BucketedDvMaintainer::new(false);
        for (i, f) in vectors.iter().enumerate() {
            m.notify_new_deletion(f, i as u64).unwrap();
        }
        let change = m.write_index_file(io.as_ref(), "/t/index", name).unwrap().unwrap();
        files.push((change.new_file, format!("/t/index/{name}")));
    }
    let mut m = AppendDvMaintainer::restore(io.as_ref(), &files, false).unwrap();
    assert_eq!(m.base(), strata_spec::DvIndexBase::Files(vec!["index-a-0".into(), "index-b-0".into()]));
    assert_eq!(m.index_file_of("f3"), Some("index-b-0"));
    assert!(m.vector_of("f2").unwrap().is_deleted(1));
    assert!(!m.is_modified());
    m.remove("f1");
    m.set("f9", m.vector_with("f9", &[4]).unwrap());
    let change = m.persist(io.as_ref(), "/t/index", || "index-c-0".into()).unwrap();
    let deleted: Vec<&str> = change.deleted_files.iter().map(|f| f.file_name.as_str()).collect();
    assert_eq!(deleted, ["index-a-0"]);
    let new = &change.new_files[0];
    let names: Vec<&str> = new.dv_ranges.as_ref().unwrap().iter().map(|r| r.data_file_name.as_str()).collect();
    assert_eq!(names, ["f2", "f9"]);
    assert!(m.vector_of("f1").is_none());
    assert_eq!(m.index_file_of("f9"), Some("index-c-0"));
    assert_eq!(m.base(), strata_spec::DvIndexBase::Files(vec!["index-b-0".into(), "index-c-0".into()]));
    // The same data file in two index files is refused, not guessed.
    let twice = vec![files[0].clone(), (files[0].0.clone(), files[0].1.clone())];
    assert_eq!(AppendDvMaintainer::restore(io.as_ref(), &twice, false).unwrap_err().kind(), ErrorKind::Corrupt);
}
