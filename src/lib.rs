//! Strata
