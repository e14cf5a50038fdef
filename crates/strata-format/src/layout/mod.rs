//! What a data file holds: Paimon's key-value layout and system fields, Paimon types as Arrow types, exact
//! casts of input columns, and schema evolution on read.

pub(crate) mod arrow_types;
pub(crate) mod evolution;
pub(crate) mod exact_cast;
pub(crate) mod kv;
pub(crate) mod system_fields;
