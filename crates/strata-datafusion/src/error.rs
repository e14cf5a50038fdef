//! Errors across the boundary: Strata's typed errors travel through DataFusion as external errors and come
//! back out with their kind, so `strata sql` exits with the same codes as every other command.

use datafusion::error::DataFusionError;
use strata_spec::Error;

/// A Strata error as a DataFusion error (recoverable by [`to_strata`]).
pub(crate) fn to_df(e: Error) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// A DataFusion error as a Strata error: the Strata error inside it when there is one (an error of a read or
/// a write), else one of the kind DataFusion's says (a query that does not parse or plan is invalid input;
/// SQL DataFusion does not implement is unsupported).
pub fn to_strata(e: DataFusionError) -> Error {
    let e = match take_strata(e) {
        Ok(inner) => return inner,
        Err(e) => e,
    };
    if let Some(inner) = strata_inside(&e) {
        return clone_error(inner);
    }
    let message = e.strip_backtrace();
    match e.find_root() {
        // DataFusion's planner says so when a catalog has no such table or database.
        DataFusionError::Plan(m)
            if m.starts_with("table '") && m.ends_with("not found") || m.starts_with("failed to resolve schema") =>
        {
            Error::NotFound { path: message }
        }
        DataFusionError::NotImplemented(_) => Error::unsupported(message),
        DataFusionError::IoError(io) => Error::io("sql", std::io::Error::new(io.kind(), message)),
        DataFusionError::ResourcesExhausted(_) => Error::io("sql", std::io::Error::other(message)),
        // DataFusion's own invariant broke: a bug (of DataFusion's or of Strata's plans), not worth a retry.
        DataFusionError::Internal(_) => Error::Internal { what: "sql".into(), message, cause: Some(Box::new(e)) },
        _ => Error::Invalid { what: "sql".into(), message, cause: Some(Box::new(e)) },
    }
}

/// The Strata error `e` carries, moved out with its own causes, where the chain of external, shared and
/// context errors down to it is owned; `e` back otherwise.
fn take_strata(e: DataFusionError) -> Result<Error, DataFusionError> {
    match e {
        DataFusionError::External(inner) => match inner.downcast::<Error>() {
            Ok(strata) => Ok(*strata),
            Err(inner) => match inner.downcast::<DataFusionError>() {
                Ok(df) => take_strata(*df),
                Err(inner) => Err(DataFusionError::External(inner)),
            },
        },
        DataFusionError::Shared(shared) => match std::sync::Arc::try_unwrap(shared) {
            Ok(df) => take_strata(df),
            Err(shared) => Err(DataFusionError::Shared(shared)),
        },
        DataFusionError::Context(context, inner) => {
            take_strata(*inner).map_err(|inner| DataFusionError::Context(context, Box::new(inner)))
        }
        other => Err(other),
    }
}

/// The Strata error somewhere in `e`'s chain of external and wrapped errors.
fn strata_inside(e: &DataFusionError) -> Option<&Error> {
    let mut current: &(dyn std::error::Error + 'static) = e;
    loop {
        if let Some(s) = current.downcast_ref::<Error>() {
            return Some(s);
        }
        if let Some(DataFusionError::External(inner)) = current.downcast_ref::<DataFusionError>() {
            current = inner.as_ref();
            continue;
        }
        if let Some(DataFusionError::Shared(inner)) = current.downcast_ref::<DataFusionError>() {
            current = inner.as_ref();
            continue;
        }
        current = current.source()?;
    }
}

/// A copy of `e` (Strata's error owns an `io::Error`, which does not clone).
fn clone_error(e: &Error) -> Error {
    match e {
        Error::Io { path, source } => Error::io(path.clone(), std::io::Error::new(source.kind(), source.to_string())),
        Error::NotFound { path } => Error::NotFound { path: path.clone() },
        Error::AlreadyExists { path } => Error::AlreadyExists { path: path.clone() },
        Error::Corrupt { path, message, .. } => Error::corrupt_file(path.clone(), message.clone()),
        Error::Invalid { what, message, .. } => Error::invalid(what.clone(), message.clone()),
        Error::Conflict { message } => Error::Conflict { message: message.clone() },
        Error::Unsupported { message } => Error::unsupported(message.clone()),
        Error::SnapshotExpired { table, snapshot, earliest } => {
            Error::SnapshotExpired { table: table.clone(), snapshot: *snapshot, earliest: *earliest }
        }
        Error::Internal { what, message, .. } => Error::internal(what.clone(), message.clone()),
        // A variant added later keeps its kind and message.
        other => match other.kind() {
            strata_spec::ErrorKind::NotFound => Error::NotFound { path: other.to_string() },
            strata_spec::ErrorKind::Conflict => Error::Conflict { message: other.to_string() },
            strata_spec::ErrorKind::Corrupt => Error::corrupt(other.to_string()),
            strata_spec::ErrorKind::Unsupported => Error::unsupported(other.to_string()),
            strata_spec::ErrorKind::Invalid => Error::invalid("sql", other.to_string()),
            strata_spec::ErrorKind::Internal => Error::internal("sql", other.to_string()),
            _ => Error::io("sql", std::io::Error::other(other.to_string())),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_spec::ErrorKind;

    #[test]
    fn strata_errors_come_back_with_their_kind() {
        let e = to_df(Error::Conflict { message: "lost".into() });
        let wrapped = DataFusionError::Context("insert".into(), Box::new(e));
        let back = to_strata(wrapped);
        assert_eq!(back.kind(), ErrorKind::Conflict);
        assert!(back.to_string().contains("lost"), "{back}");
        let shared = DataFusionError::Shared(std::sync::Arc::new(to_df(Error::NotFound { path: "t".into() })));
        assert_eq!(to_strata(shared).kind(), ErrorKind::NotFound);
        assert_eq!(to_strata(DataFusionError::Plan("no such column".into())).kind(), ErrorKind::Invalid);
        assert_eq!(to_strata(DataFusionError::NotImplemented("MERGE".into())).kind(), ErrorKind::Unsupported);
    }

    #[test]
    fn errors_keep_their_causes_and_internal_ones_are_not_retried() {
        use std::error::Error as _;
        // A Strata error travels through DataFusion and comes back as itself, its own cause included.
        let parse = "x".parse::<i64>().unwrap_err();
        let inner = Error::invalid_from("option 'bucket'", parse);
        let back = to_strata(DataFusionError::Context("plan".into(), Box::new(to_df(inner))));
        assert_eq!(back.kind(), ErrorKind::Invalid);
        let source = back.source().map(ToString::to_string);
        assert_eq!(source.as_deref(), Some("invalid digit found in string"), "{back}");
        // DataFusion's own invariant breaking is internal: reported, not retried as an I/O error was.
        let internal = to_strata(DataFusionError::Internal("physical plan mismatch".into()));
        assert_eq!(internal.kind(), ErrorKind::Internal);
        assert!(!internal.is_retryable());
        assert!(internal.source().is_some(), "{internal}");
        // A query that does not plan keeps DataFusion's error as its cause.
        let plan = to_strata(DataFusionError::Plan("no such column".into()));
        assert!(plan.source().is_some_and(|s| s.to_string().contains("no such column")), "{plan}");
    }
}
