//! The system columns of Paimon's key-value files and their field ids (Paimon's `SpecialFields`).

/// Prefix of key columns.
pub const KEY_PREFIX: &str = "_KEY_";
/// The sequence-number column.
pub const SEQUENCE_NUMBER: &str = "_SEQUENCE_NUMBER";
/// The row-kind column.
pub const VALUE_KIND: &str = "_VALUE_KIND";
/// A column Strata adds to batches read with positions: the row's position in its file.
pub(crate) const ROW_POSITION: &str = "_ROW_POSITION";

/// Field id of key column `k` is this plus `k`'s id (`SpecialFields.KEY_FIELD_ID_START`).
pub(crate) const KEY_FIELD_ID_START: i32 = i32::MAX / 2;
/// Field id of `_SEQUENCE_NUMBER`.
pub(crate) const SEQUENCE_NUMBER_FIELD_ID: i32 = i32::MAX - 1;
/// Field id of `_VALUE_KIND`.
pub(crate) const VALUE_KIND_FIELD_ID: i32 = i32::MAX - 2;
