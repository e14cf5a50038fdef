//! Applying a deletion vector at decode time: a parquet `RowSelection` that skips deleted rows, so they are
//! never decoded (rather than decoded and filtered out).

use std::ops::Range;

use parquet::arrow::arrow_reader::{RowSelection, RowSelector};

use crate::DeletionVector;

/// The selection over rows `0..num_rows` of a file that keeps exactly the rows `dv` does not delete.
pub fn row_selection(dv: &dyn DeletionVector, num_rows: u64) -> RowSelection {
    row_selection_for_ranges(dv, std::slice::from_ref(&(0..num_rows)))
}

/// The selection over the concatenation of `ranges` (the row ranges of the row groups being read, in
/// order, in file positions) that keeps the rows `dv` does not delete.
pub fn row_selection_for_ranges(dv: &dyn DeletionVector, ranges: &[Range<u64>]) -> RowSelection {
    let mut selectors: Vec<RowSelector> = Vec::new();
    let mut push = |skip: bool, n: u64| {
        if n == 0 {
            return;
        }
        let n = n as usize;
        match selectors.last_mut() {
            Some(last) if last.skip == skip => last.row_count += n,
            _ => selectors.push(if skip { RowSelector::skip(n) } else { RowSelector::select(n) }),
        }
    };
    let mut deleted = dv.positions().peekable();
    for r in ranges {
        let mut cursor = r.start;
        while deleted.peek().is_some_and(|&p| p < r.start) {
            deleted.next();
        }
        while let Some(&p) = deleted.peek() {
            if p >= r.end {
                break;
            }
            push(false, p - cursor);
            push(true, 1);
            cursor = p + 1;
            deleted.next();
        }
        push(false, r.end - cursor);
    }
    RowSelection::from(selectors)
}
