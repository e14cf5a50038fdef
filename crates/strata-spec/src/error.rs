//! Strata's error type.
//!
//! Precise variants inside, one coarse [`ErrorKind`] outside: callers decide on the kind (retry, report,
//! give up), and the message names the file or the input that is wrong.

use std::fmt;

/// The result type of every fallible Strata call.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Coarse classification of an [`Error`], for callers that decide what to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Storage failed (disk, network, injected fault). Usually worth a retry.
    Io,
    /// A file or table that was asked for does not exist.
    NotFound,
    /// A create-if-absent found the object already there.
    AlreadyExists,
    /// Stored bytes do not decode: truncated, malformed or checksum mismatch.
    Corrupt,
    /// The caller's input is wrong: a schema, a type string, an option value, an argument.
    Invalid,
    /// A commit lost against a concurrent one and cannot be rebased.
    Conflict,
    /// A valid feature of the format that Strata does not implement (yet).
    Unsupported,
    /// Strata broke an invariant of its own, or a library failed on values Strata made: a bug to report,
    /// not worth a retry.
    Internal,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            ErrorKind::Io => "io",
            ErrorKind::NotFound => "not-found",
            ErrorKind::AlreadyExists => "already-exists",
            ErrorKind::Corrupt => "corrupt",
            ErrorKind::Invalid => "invalid",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Internal => "internal",
        };
        f.write_str(s)
    }
}

/// The cause of an error, from a library or the operating system, kept for [`std::error::Error::source`].
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Every error Strata returns.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The storage layer failed on `path`.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file or directory the operation was on.
        path: String,
        /// What the operating system (or the fault injector) said.
        #[source]
        source: std::io::Error,
    },
    /// `path` does not exist.
    #[error("not found: {path}")]
    NotFound {
        /// What was looked for.
        path: String,
    },
    /// A create-if-absent found `path` already there.
    #[error("already exists: {path}")]
    AlreadyExists {
        /// The object that exists.
        path: String,
    },
    /// The bytes of `path` do not decode.
    #[error("corrupt file {path}: {message}")]
    Corrupt {
        /// The file (empty while a codec runs on bytes; filled in by [`Error::in_file`]).
        path: String,
        /// What is wrong with it.
        message: String,
        /// The decoder's own error, when one said so.
        #[source]
        cause: Option<Cause>,
    },
    /// The caller's input is wrong.
    #[error("invalid {what}: {message}")]
    Invalid {
        /// Which input: "type string", "option 'bucket'", "schema", …
        what: String,
        /// What is wrong with it.
        message: String,
        /// The parser's own error, when one said so.
        #[source]
        cause: Option<Cause>,
    },
    /// A commit conflicts with one already made.
    #[error("commit conflict: {message}")]
    Conflict {
        /// Which files or key ranges conflict.
        message: String,
    },
    /// Valid Paimon, not implemented by Strata.
    #[error("unsupported: {message}")]
    Unsupported {
        /// What is not supported.
        message: String,
    },
    /// A reader needs snapshot `snapshot` of `table`, and expiration already removed it (kind
    /// [`ErrorKind::NotFound`]): the changes it held can no longer be read, so an incremental read or a
    /// follow stops rather than skip them.
    #[error(
        "snapshot {snapshot} of {table} has expired{}: its changes can no longer be read (a consumer id keeps \
         the snapshots its reader still needs from expiring)",
        match earliest { Some(e) => format!(" (the earliest snapshot is {e})"), None => String::new() }
    )]
    SnapshotExpired {
        /// The table directory.
        table: String,
        /// The snapshot that is gone.
        snapshot: i64,
        /// The earliest snapshot left, if any.
        earliest: Option<i64>,
    },
    /// Strata broke an invariant of its own (kind [`ErrorKind::Internal`]), or a library failed on values
    /// Strata made (an Arrow batch of the wrong shape, a report that does not serialize).
    #[error("internal error in {what}: {message}")]
    Internal {
        /// The step that failed.
        what: String,
        /// What went wrong.
        message: String,
        /// The library's own error.
        #[source]
        cause: Option<Cause>,
    },
}

impl Error {
    /// The coarse kind of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Io { .. } => ErrorKind::Io,
            Error::NotFound { .. } => ErrorKind::NotFound,
            Error::AlreadyExists { .. } => ErrorKind::AlreadyExists,
            Error::Corrupt { .. } => ErrorKind::Corrupt,
            Error::Invalid { .. } => ErrorKind::Invalid,
            Error::Conflict { .. } => ErrorKind::Conflict,
            Error::Unsupported { .. } => ErrorKind::Unsupported,
            Error::SnapshotExpired { .. } => ErrorKind::NotFound,
            Error::Internal { .. } => ErrorKind::Internal,
        }
    }

    /// Whether the same call may succeed if tried again.
    pub fn is_retryable(&self) -> bool {
        matches!(self.kind(), ErrorKind::Io | ErrorKind::Conflict)
    }

    /// A corrupt-data error raised by a codec that does not know the file name yet.
    pub fn corrupt(message: impl Into<String>) -> Self {
        Error::Corrupt { path: String::new(), message: message.into(), cause: None }
    }

    /// `path` does not decode: `message` says why.
    pub fn corrupt_file(path: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Corrupt { path: path.into(), message: message.into(), cause: None }
    }

    /// `path` does not decode: its decoder's error `cause` says why (and stays the error's source).
    pub fn corrupt_from(path: impl Into<String>, cause: impl Into<Cause>) -> Self {
        let cause = cause.into();
        Error::Corrupt { path: path.into(), message: cause.to_string(), cause: Some(cause) }
    }

    /// An invalid-input error.
    pub fn invalid(what: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Invalid { what: what.into(), message: message.into(), cause: None }
    }

    /// Input `what` is wrong: its parser's error `cause` says why (and stays the error's source).
    pub fn invalid_from(what: impl Into<String>, cause: impl Into<Cause>) -> Self {
        let cause = cause.into();
        Error::Invalid { what: what.into(), message: cause.to_string(), cause: Some(cause) }
    }

    /// A broken invariant of Strata's in step `what`.
    pub fn internal(what: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Internal { what: what.into(), message: message.into(), cause: None }
    }

    /// A library failed in step `what` on values Strata made: its error `cause` stays the error's source.
    pub fn internal_from(what: impl Into<String>, cause: impl Into<Cause>) -> Self {
        let cause = cause.into();
        Error::Internal { what: what.into(), message: cause.to_string(), cause: Some(cause) }
    }

    /// An unsupported-feature error.
    pub fn unsupported(message: impl Into<String>) -> Self {
        Error::Unsupported { message: message.into() }
    }

    /// An I/O error on `path`.
    pub fn io(path: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }

    /// Names the file a codec error came from, unless it already names one.
    pub fn in_file(self, file: &str) -> Self {
        match self {
            Error::Corrupt { path, message, cause, .. } if path.is_empty() => {
                Error::Corrupt { path: file.to_string(), message, cause }
            }
            Error::Invalid { what, message, cause, .. } => {
                if what.contains(file) {
                    Error::Invalid { what, message, cause }
                } else {
                    Error::Invalid { what: format!("{what} in {file}"), message, cause }
                }
            }
            Error::Unsupported { message } if !message.contains(file) => {
                Error::Unsupported { message: format!("{message} (in {file})") }
            }
            other => other,
        }
    }
}

/// Adds [`Error::in_file`] to results.
pub trait ResultExt<T> {
    /// Names the file an error came from.
    fn in_file(self, file: &str) -> Result<T>;
}

impl<T> ResultExt<T> for Result<T> {
    fn in_file(self, file: &str) -> Result<T> {
        self.map_err(|e| e.in_file(file))
    }
}

/// Runs a decoder over untrusted bytes, turning a panic inside it (a third-party library that asserts
/// instead of returning an error) into a corrupt-data error naming `what`. Only for code that touches
/// nothing but the bytes it decodes, so no state is left half-changed by the unwinding.
pub fn contain_panic<T>(what: &str, decode: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_contained(decode) {
        Ok(result) => result,
        Err(payload) => Err(Error::corrupt(format!(
            "{what} is malformed (the decoder failed: {})",
            panic_message(payload.as_ref())
        ))),
    }
}

thread_local! {
    static CONTAINING: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// `catch_unwind` for a decoder boundary, marking the thread as containing a panic while `f` runs, so a
/// program's panic hook can tell a contained panic (reported as a corrupt-file error) from a bug
/// ([`panic_is_contained`]).
pub fn catch_contained<T>(f: impl FnOnce() -> T) -> std::thread::Result<T> {
    CONTAINING.with(|c| c.set(c.get() + 1));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    CONTAINING.with(|c| c.set(c.get().saturating_sub(1)));
    result
}

/// Whether the panic being raised on this thread will be contained by [`catch_contained`] (for a panic
/// hook that stays quiet about those: the caller gets a corrupt-file error instead).
pub fn panic_is_contained() -> bool {
    CONTAINING.with(|c| c.get() > 0)
}

/// The message of a caught panic (its `&str` or `String` payload).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn causes_stay_sources_and_messages_stay_as_they_read() {
        let parse = "12x".parse::<u32>().unwrap_err();
        let e = Error::invalid_from("option 'bucket'", parse.clone());
        assert_eq!(e.to_string(), format!("invalid option 'bucket': {parse}"));
        assert_eq!(e.source().map(ToString::to_string), Some(parse.to_string()));
        let e = e.in_file("schema-0");
        assert!(e.source().is_some(), "naming the file keeps the cause: {e}");
        let e = Error::corrupt_from("data-1.parquet", std::io::Error::other("bad page"));
        assert_eq!((e.kind(), e.to_string().as_str()), (ErrorKind::Corrupt, "corrupt file data-1.parquet: bad page"));
        assert!(e.source().is_some());
        let e = Error::internal_from("merge output", std::io::Error::other("columns of different lengths"));
        assert_eq!(e.kind(), ErrorKind::Internal);
        assert!(!e.is_retryable());
        assert_eq!(e.to_string(), "internal error in merge output: columns of different lengths");
        assert!(Error::invalid("x", "y").source().is_none());
    }
}
