//! `strata._strata`: the native half of Strata's Python package. It holds what touches tables (catalogs,
//! writes, commits, compactions, scans, lookups, maintenance) and crosses to Python only through Arrow's C
//! data and stream interfaces, so batches go in and come out without copies. Every call that does I/O or
//! compute releases the GIL. The Python half (`python/strata/__init__.py`) shapes arguments (filters, keys,
//! schemas) into what these calls take.

mod catalog;
mod convert;
mod errors;
mod rows;
mod scan;
mod table;
mod values;
mod write;

use pyo3::prelude::*;

/// The native module.
#[pymodule]
fn _strata(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    m.add_class::<catalog::NativeCatalog>()?;
    m.add_class::<table::NativeTable>()?;
    m.add_class::<write::NativeWrite>()?;
    m.add_class::<scan::NativeQuery>()?;
    m.add_function(wrap_pyfunction!(convert::import_addresses, m)?)?;
    m.add_function(wrap_pyfunction!(convert::paimon_type_of, m)?)?;
    Ok(())
}
