//! Which rows of a file a reader decodes, as format-neutral runs of skipped and read rows: the rows a
//! deletion vector leaves live (deleted rows are skipped, never decoded) or an explicit list of positions.
//! The parquet and ORC readers each turn the runs into their own row selection.

use std::ops::Range;

use strata_dv::DeletionVector;

/// A run of rows: whether they are skipped, and how many.
pub(crate) type RowRun = (bool, usize);

/// Appends `n` rows to `runs`, joining a run of the same kind.
fn push(runs: &mut Vec<RowRun>, skip: bool, n: u64) {
    if n == 0 {
        return;
    }
    match runs.last_mut() {
        Some(last) if last.0 == skip => last.1 += n as usize,
        _ => runs.push((skip, n as usize)),
    }
}

/// The runs over the concatenation of `ranges` (the row ranges being read, in order, in file positions) that
/// read exactly the rows `dv` does not delete.
pub fn live_runs(dv: &DeletionVector, ranges: &[Range<u64>]) -> Vec<RowRun> {
    let mut runs = Vec::new();
    let mut deleted = dv.positions().peekable();
    for r in ranges {
        let mut cursor = r.start;
        if deleted.peek().is_some_and(|&p| p < r.start) {
            deleted = dv.positions_from(r.start).peekable();
        }
        while let Some(&p) = deleted.peek() {
            if p >= r.end {
                break;
            }
            push(&mut runs, false, p - cursor);
            push(&mut runs, true, 1);
            cursor = p + 1;
            deleted.next();
        }
        push(&mut runs, false, r.end - cursor);
    }
    runs
}

/// The runs over the concatenation of `groups` (the row groups being read, in order, in file positions)
/// that read exactly the rows of `reads` (ascending, disjoint ranges within the groups: the pages a
/// predicate may match) that `dv` does not delete.
pub(crate) fn segment_runs(groups: &[Range<u64>], reads: &[Range<u64>], dv: Option<&DeletionVector>) -> Vec<RowRun> {
    let mut runs = Vec::new();
    let mut deleted = dv.map(|d| d.positions().peekable());
    let mut next = 0usize;
    for g in groups {
        let mut cursor = g.start;
        while next < reads.len() && reads[next].end <= g.start {
            next += 1;
        }
        while next < reads.len() && reads[next].start < g.end {
            let r = reads[next].start.max(cursor)..reads[next].end.min(g.end);
            push(&mut runs, true, r.start - cursor);
            let mut at = r.start;
            if let (Some(deleted), Some(dv)) = (deleted.as_mut(), dv) {
                // Found by the bitmap's index: a lookup's one page of a file with many deletions does not
                // walk every deletion before it.
                if deleted.peek().is_some_and(|&p| p < r.start) {
                    *deleted = dv.positions_from(r.start).peekable();
                }
                while let Some(p) = deleted.next_if(|&p| p < r.end) {
                    push(&mut runs, false, p - at);
                    push(&mut runs, true, 1);
                    at = p + 1;
                }
            }
            push(&mut runs, false, r.end - at);
            cursor = r.end;
            if reads[next].end > g.end {
                break;
            }
            next += 1;
        }
        push(&mut runs, true, g.end - cursor);
    }
    runs
}

/// The runs over rows `0..num_rows` that read exactly `positions` (ascending; others are ignored).
pub(crate) fn position_runs(positions: &[u64], num_rows: u64) -> Vec<RowRun> {
    let mut runs = Vec::new();
    let mut cursor = 0u64;
    for &p in positions {
        if p < cursor || p >= num_rows {
            continue;
        }
        push(&mut runs, true, p - cursor);
        push(&mut runs, false, 1);
        cursor = p + 1;
    }
    push(&mut runs, true, num_rows - cursor);
    runs
}

/// The runs as a parquet row selection.
pub fn parquet_selection(runs: &[RowRun]) -> parquet::arrow::arrow_reader::RowSelection {
    use parquet::arrow::arrow_reader::RowSelector;
    runs.iter()
        .map(|&(skip, n)| if skip { RowSelector::skip(n) } else { RowSelector::select(n) })
        .collect::<Vec<_>>()
        .into()
}

/// The runs as an ORC row selection.
pub(crate) fn orc_selection(runs: &[RowRun]) -> orc_rust::RowSelection {
    use orc_rust::RowSelector;
    orc_rust::RowSelection::from(
        runs.iter()
            .map(|&(skip, n)| if skip { RowSelector::skip(n) } else { RowSelector::select(n) })
            .collect::<Vec<_>>(),
    )
}

#[cfg(test)]
// Row-group lists of one group are what single-group files have, not a mistaken range.
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn read_positions(runs: &[RowRun], ranges: &[Range<u64>]) -> Vec<u64> {
        let all: Vec<u64> = ranges.iter().flat_map(|r| r.clone()).collect();
        let mut out = Vec::new();
        let mut i = 0usize;
        for &(skip, n) in runs {
            if !skip {
                out.extend(&all[i..i + n]);
            }
            i += n;
        }
        assert_eq!(i, all.len(), "the runs cover every row read");
        out
    }

    proptest! {
        #[test]
        fn live_runs_read_exactly_the_rows_not_deleted(
            positions in proptest::collection::btree_set(0u64..3_000, 0..500),
            n in 0u64..3_000,
            bitmap64 in any::<bool>(),
        ) {
            let mut dv = DeletionVector::new(bitmap64);
            for &p in &positions {
                dv.delete(p).map_err(|e| TestCaseError::fail(e.to_string()))?;
            }
            let whole = [0..n];
            let want: Vec<u64> = (0..n).filter(|p| !positions.contains(p)).collect();
            prop_assert_eq!(read_positions(&live_runs(&dv, &whole), &whole), want);
            // Two row groups out of three: [0,1000) and [2000,n).
            if n > 2000 {
                let groups = [0..1000, 2000..n];
                let live: Vec<u64> = (0..1000).chain(2000..n).filter(|p| !positions.contains(p)).collect();
                prop_assert_eq!(read_positions(&live_runs(&dv, &groups), &groups), live);
            }
        }

        #[test]
        fn segment_runs_read_exactly_the_live_rows_of_the_segments(
            deleted in proptest::collection::btree_set(0u64..3_000, 0..300),
            cuts in proptest::collection::btree_set(1u64..3_000, 0..40),
            keep in proptest::collection::vec(any::<bool>(), 41),
            with_dv in any::<bool>(),
        ) {
            // Groups [0,1000) and [2000,3000) of a 3,000-row file; the segments between the cuts, each kept
            // or not, clipped to the groups (as the page pruning makes them).
            let groups = [0..1000u64, 2000..3000];
            let mut bounds: Vec<u64> = std::iter::once(0).chain(cuts.iter().copied()).chain(std::iter::once(3000)).collect();
            bounds.dedup();
            let mut reads: Vec<Range<u64>> = Vec::new();
            for (i, w) in bounds.windows(2).enumerate() {
                if !keep[i % keep.len()] {
                    continue;
                }
                for g in &groups {
                    let (a, b) = (w[0].max(g.start), w[1].min(g.end));
                    if a < b {
                        match reads.last_mut() {
                            Some(last) if last.end == a => last.end = b,
                            _ => reads.push(a..b),
                        }
                    }
                }
            }
            let mut dv = DeletionVector::new(false);
            for &p in &deleted {
                dv.delete(p).map_err(|e| TestCaseError::fail(e.to_string()))?;
            }
            let want: Vec<u64> = reads
                .iter()
                .flat_map(|r| r.clone())
                .filter(|p| !(with_dv && deleted.contains(p)))
                .collect();
            let runs = segment_runs(&groups, &reads, with_dv.then_some(&dv));
            prop_assert_eq!(read_positions(&runs, &groups), want);
        }

        #[test]
        fn position_runs_read_exactly_the_positions(positions in proptest::collection::btree_set(0u64..500, 0..100), n in 0u64..400) {
            let list: Vec<u64> = positions.iter().copied().collect();
            let want: Vec<u64> = positions.iter().copied().filter(|&p| p < n).collect();
            prop_assert_eq!(read_positions(&position_runs(&list, n), &[0..n]), want);
        }
    }
}
