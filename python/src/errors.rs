//! Strata's error kinds as Python exceptions: one class per `ErrorKind`, all under `StrataError`, so callers
//! catch what they can act on (`ConflictError`: write again; `NotFoundError`; `CorruptError`: stop).

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use strata_spec::{Error, ErrorKind};

create_exception!(strata, StrataError, PyException, "Any error Strata reports; `kind` names its kind.");
create_exception!(strata, StrataIOError, StrataError, "Storage failed (disk, network); usually worth a retry.");
create_exception!(strata, NotFoundError, StrataError, "A table, snapshot, tag or file asked for does not exist.");
create_exception!(strata, AlreadyExistsError, StrataError, "What was to be created is already there.");
create_exception!(
    strata,
    CorruptError,
    StrataError,
    "Stored bytes do not decode: truncated, malformed or checksum mismatch."
);
create_exception!(
    strata,
    InvalidError,
    StrataError,
    "The caller's input is wrong: a schema, a value, an option, an argument."
);
create_exception!(
    strata,
    ConflictError,
    StrataError,
    "A commit lost against a concurrent one; nothing was committed: write again."
);
create_exception!(
    strata,
    UnsupportedError,
    StrataError,
    "A valid feature of the format that Strata does not implement."
);

/// Adds the exception classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("StrataError", py.get_type::<StrataError>())?;
    m.add("StrataIOError", py.get_type::<StrataIOError>())?;
    m.add("NotFoundError", py.get_type::<NotFoundError>())?;
    m.add("AlreadyExistsError", py.get_type::<AlreadyExistsError>())?;
    m.add("CorruptError", py.get_type::<CorruptError>())?;
    m.add("InvalidError", py.get_type::<InvalidError>())?;
    m.add("ConflictError", py.get_type::<ConflictError>())?;
    m.add("UnsupportedError", py.get_type::<UnsupportedError>())?;
    Ok(())
}

/// The Python exception of a Strata error, by its kind.
pub(crate) fn to_py(e: Error) -> PyErr {
    let message = e.to_string();
    match e.kind() {
        ErrorKind::Io => StrataIOError::new_err(message),
        ErrorKind::NotFound => NotFoundError::new_err(message),
        ErrorKind::AlreadyExists => AlreadyExistsError::new_err(message),
        ErrorKind::Corrupt => CorruptError::new_err(message),
        ErrorKind::Invalid => InvalidError::new_err(message),
        ErrorKind::Conflict => ConflictError::new_err(message),
        ErrorKind::Unsupported => UnsupportedError::new_err(message),
        _ => StrataError::new_err(message),
    }
}

/// An invalid-argument error.
pub(crate) fn invalid(what: &str, why: impl std::fmt::Display) -> PyErr {
    to_py(Error::invalid(what.to_string(), why.to_string()))
}

/// `Result<T, strata::Error>` into a Python result.
pub(crate) trait IntoPyResult<T> {
    /// The value, or the error as its Python exception.
    fn py(self) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for strata_spec::Result<T> {
    fn py(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
