//! Commands on a table's metadata: `strata create`, `alter`, `inspect`, `tag`, `rollback` and `branch`.

pub(crate) mod alter;
pub(crate) mod branches;
pub(crate) mod create;
pub(crate) mod inspect;
pub(crate) mod tags;
