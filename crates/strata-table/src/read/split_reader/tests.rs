use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};

use crate::read::ReadBuilder;
use crate::table::Table;
use crate::test_table::id_string_table;
use crate::write::TableWrite;

const ROWS: i64 = 200_000;

fn table(dir: &std::path::Path) -> Table {
    id_string_table(dir, &[("bucket", "1")])
}

fn batch(ids: &[i64], round: i64) -> RecordBatch {
    let id: ArrayRef = Arc::new(Int64Array::from(ids.to_vec()));
    let s: ArrayRef = Arc::new(StringArray::from_iter_values(ids.iter().map(|i| format!("{i}-{round}"))));
    RecordBatch::try_from_iter([("id", id), ("s", s)]).unwrap()
}

fn commit(t: &Table, w: &mut TableWrite) {
    let messages = w.prepare_commit_waiting().unwrap();
    crate::commit::batch::commit_batch("test", t, w, messages, None).unwrap();
}

/// A merge split whose files are read in parts after the keys-first merge returns the model's rows: each
/// part reads its rows of the file with the merge's deletion vector, none twice, none left out.
#[test]
fn a_merge_splits_files_read_in_parts_give_the_models_rows() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path());
    let mut model: BTreeMap<i64, String> = BTreeMap::new();
    let mut w = TableWrite::new(&t).unwrap();
    let load: Vec<i64> = (0..ROWS).collect();
    w.write_batch(&batch(&load, 0)).unwrap();
    model.extend(load.iter().map(|&i| (i, format!("{i}-0"))));
    commit(&t, &mut w);
    // An update round over every seventh key, and deletes of every thirteenth.
    let updated: Vec<i64> = (0..ROWS).step_by(7).collect();
    w.write_batch(&batch(&updated, 1)).unwrap();
    model.extend(updated.iter().map(|&i| (i, format!("{i}-1"))));
    let deleted: Vec<i64> = (5..ROWS).step_by(13).collect();
    let keys = RecordBatch::try_from_iter([("id", Arc::new(Int64Array::from(deleted.clone())) as ArrayRef)]).unwrap();
    w.delete_keys(&keys).unwrap();
    for k in &deleted {
        model.remove(k);
    }
    commit(&t, &mut w);

    let read = ReadBuilder::new(&t);
    let plan = read.plan().unwrap();
    let whole = read.split_reader().unwrap();
    let mut parted = read.split_reader().unwrap();
    parted.part_bytes = 1;
    for reader in [&whole, &parted] {
        let mut got: BTreeMap<i64, String> = BTreeMap::new();
        for split in &plan.splits {
            reader
                .read_split(split, &mut |b| {
                    let ids = b.column(0).as_primitive::<Int64Type>();
                    let s = b.column(1).as_string::<i32>();
                    for r in 0..b.num_rows() {
                        assert!(got.insert(ids.value(r), s.value(r).to_string()).is_none(), "a row read twice");
                    }
                    true
                })
                .unwrap();
        }
        assert_eq!(got, model, "part bytes {}", reader.part_bytes);
    }
    // The load's file was read in parts.
    let split = plan.splits.iter().find(|s| !s.raw).expect("a merge split");
    let refs: Vec<_> = split
        .files
        .iter()
        .map(|(path, meta)| t.layout().unwrap().file_ref(path.clone(), meta.clone(), None).unwrap())
        .collect();
    assert!(parted.in_parts(refs.clone()).len() > refs.len(), "no file was cut into parts");
    assert_eq!(whole.in_parts(refs.clone()).len(), refs.len(), "small files are read whole");
}

/// A manifest's sizes and counts cut a file into a bounded number of parts that tile its rows, whatever
/// they say (a crafted entry must not overflow, panic or make millions of parts).
#[test]
fn crafted_sizes_make_a_bounded_number_of_parts_that_tile_the_rows() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path());
    let mut w = TableWrite::new(&t).unwrap();
    w.write_batch(&batch(&[1, 2, 3], 0)).unwrap();
    commit(&t, &mut w);
    let plan = ReadBuilder::new(&t).plan().unwrap();
    let mut meta = plan.splits[0].files[0].1.clone();
    for (size, rows) in [(i64::MAX, i64::MAX), (i64::MAX, 1 << 40), (1 << 40, i64::MAX), (i64::MAX, 0)] {
        meta.file_size = size;
        meta.row_count = rows;
        let parts = strata_format::parts_of(&meta, size, super::READ_PART_BYTES);
        assert!((1..=4096).contains(&parts), "{parts} parts for size {size}, rows {rows}");
        let rows = rows as u64;
        let mut at = 0;
        for i in 0..parts as u64 {
            let r = strata_format::part_rows(rows, i, parts as u64);
            assert_eq!(r.start, at, "parts leave no gap");
            assert!(r.end >= r.start);
            at = r.end;
        }
        assert_eq!(at, rows, "the parts cover every row");
    }
}
