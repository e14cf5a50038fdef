//! Altering a table: option edits and column changes, committed as one new schema file (Paimon's
//! `SchemaManager.commitChanges`).
//!
//! The new schema is `schema-(N + 1)` for a table opened at schema N, written create-if-absent: of two
//! concurrent alters of one schema, one writes the file and the other gets a retryable `Conflict`, never
//! a schema built on a version it did not see.

use std::collections::BTreeMap;

use strata_spec::{
    apply_schema_changes, option_rules, options_after_renames, Error, OptionPolicy, Result, SchemaChange, TableSchema,
};

use crate::bucket::mode::{check_writable, WritePurpose};
use crate::table::Table;

/// One alter of a table: everything in it becomes a single new schema. Options are edited first (unset,
/// then set), then the column changes apply in order, so a rename also renames the column where an
/// option set in the same alter names it, as in Paimon.
#[derive(Debug, Clone, Default)]
pub struct AlterTable {
    /// Options to set.
    pub set: BTreeMap<String, String>,
    /// Options to remove.
    pub unset: Vec<String>,
    /// Column changes, in order ([`apply_schema_changes`](strata_spec::apply_schema_changes) has the rules).
    pub columns: Vec<SchemaChange>,
    /// Run the full compaction switching `deletion-vectors.enabled` needs, instead of refusing.
    pub compact_if_needed: bool,
    /// What to do with option keys neither Strata nor Paimon knows.
    pub policy: OptionPolicy,
}

impl AlterTable {
    /// An alter of columns only.
    pub fn of_columns(changes: &[SchemaChange]) -> Self {
        AlterTable { columns: changes.to_vec(), ..Default::default() }
    }
}

/// Whether two schemas describe the same table (ids and times aside).
fn same_content(a: &TableSchema, b: &TableSchema) -> bool {
    a.fields == b.fields
        && a.highest_field_id == b.highest_field_id
        && a.partition_keys == b.partition_keys
        && a.primary_keys == b.primary_keys
        && a.options == b.options
        && a.comment == b.comment
}

impl Table {
    /// Adds, drops, renames and widens columns by Paimon's rules (see
    /// [`apply_schema_changes`](strata_spec::apply_schema_changes)): one new schema for all of `changes`, applied in
    /// order; none, and the table returned as it is, when they change nothing. A change that breaks a rule, or leaves
    /// options invalid, is refused with the column and the rule named and nothing written. Data files keep the schema
    /// id they were written under.
    pub fn alter_columns(&self, changes: &[SchemaChange]) -> Result<Table> {
        self.alter(&AlterTable::of_columns(changes))
    }

    /// Applies `alter` as one new schema (none when nothing changes): the rules of
    /// [`Table::alter_options`] for the options, those of [`Table::alter_columns`] for the columns.
    pub fn alter(&self, alter: &AlterTable) -> Result<Table> {
        let _span = tracing::info_span!("alter_table", path = self.path()).entered();
        let old = self.schema();
        let mut next = old.clone();
        for k in &alter.unset {
            next.options.remove(k);
        }
        for (k, v) in &alter.set {
            next.options.insert(k.clone(), v.clone());
        }
        option_rules::check_keys(alter.set.keys().filter(|k| old.options.get(*k) != alter.set.get(*k)), alter.policy)?;
        if !alter.columns.is_empty() {
            next = apply_schema_changes(&next, &alter.columns)?;
        }
        if same_content(old, &next) {
            return Ok(self.clone());
        }
        next.validate()?;
        option_rules::check_altered_options(old, &next)?;
        // An alter must not turn a table Strata writes into one it cannot (every later write would fail, as
        // create refuses such tables up front).
        if check_writable(old, WritePurpose::Compaction).is_ok() {
            check_writable(&next, WritePurpose::Compaction)?;
        }
        let latest = self.snapshot(None)?.map(|s| s.id);
        // A column rename moves its name inside options (bucket-key, sequence.field, ...): that is the same
        // option, so the options are compared as the renames alone would leave them.
        let renamed = TableSchema { options: options_after_renames(&old.options, &alter.columns), ..old.clone() };
        option_rules::check_change(&renamed, &next, latest)?;
        self.prepare_deletion_vector_switch(&next, alter.compact_if_needed)?;
        self.commit_schema(next)
    }

    /// Switching `deletion-vectors.enabled` either way needs a fully compacted table: in deletion-vector
    /// mode readers skip merging, so stale copies of a key in other levels would show up as duplicates
    /// (Paimon issue 5874). With `compact_if_needed` a full compaction under the current options is
    /// committed first; without it the switch is refused.
    fn prepare_deletion_vector_switch(&self, next: &TableSchema, compact_if_needed: bool) -> Result<()> {
        let after = next.core_options().deletion_vectors_enabled()?;
        if self.schema().core_options().deletion_vectors_enabled()? == after {
            return Ok(());
        }
        let Some(s) = self.snapshot(None)? else { return Ok(()) };
        if self.is_fully_compacted(&s)? {
            return Ok(());
        }
        if !compact_if_needed {
            return Err(Error::invalid(
                "option 'deletion-vectors.enabled'",
                format!(
                    "switching deletion vectors {} needs a fully compacted table (otherwise stale rows reappear, Paimon issue 5874); compact it fully first (strata compact --full) or ask for it (--compact)",
                    if after { "on" } else { "off" }
                ),
            ));
        }
        crate::write::table_writer::TableWriter::new(self, "strata-alter")?.compact(true)?;
        let s = self.snapshot(None)?.ok_or_else(|| Error::invalid("alter", "snapshot vanished"))?;
        if !self.is_fully_compacted(&s)? {
            return Err(Error::Conflict { message: "the table changed during the full compaction; retry".into() });
        }
        Ok(())
    }

    /// Writes `next` as the schema after this table's and opens the table at it. A schema written since this
    /// table was opened, or racing this one, makes it a `Conflict`: `next` was built on the older schema.
    fn commit_schema(&self, mut next: TableSchema) -> Result<Table> {
        let current = self.schema().id;
        let latest = self.schema_manager().list_ids()?.last().copied().unwrap_or(current);
        if latest != current {
            return Err(Error::Conflict {
                message: format!(
                    "the table's schema changed since it was opened (schema {latest}, this alter was made against \
                     schema {current}); reopen the table and retry"
                ),
            });
        }
        next.id = current + 1;
        next.time_millis = crate::commit::now_millis();
        match self.schema_manager().create(&next) {
            Ok(()) => {}
            Err(Error::AlreadyExists { path }) => {
                return Err(Error::Conflict { message: format!("another schema change created {path} first; retry") })
            }
            Err(e) => return Err(e),
        }
        self.reopen()
    }

    /// Changes table options (a new schema version; none when nothing changes, and the table is returned
    /// as it is). Unknown keys are refused ([`Table::alter_options_with_policy`] can keep them), and so are
    /// changes that would make stored data read differently once the table has a snapshot
    /// ([`strata_spec::option_rules`] lists them). Switching `deletion-vectors.enabled` either way needs a
    /// fully compacted table: in deletion-vector mode readers skip merging, so stale copies of a key in other
    /// levels would show up as duplicates (Paimon issue 5874). With `compact_if_needed`, a full compaction
    /// under the current options is committed first; without it the change is refused.
    pub fn alter_options(
        &self,
        set: &BTreeMap<String, String>,
        unset: &[String],
        compact_if_needed: bool,
    ) -> Result<Table> {
        self.alter_options_with_policy(set, unset, compact_if_needed, OptionPolicy::default())
    }

    /// [`Table::alter_options`], with `policy` deciding about unknown keys in `set`.
    pub fn alter_options_with_policy(
        &self,
        set: &BTreeMap<String, String>,
        unset: &[String],
        compact_if_needed: bool,
        policy: OptionPolicy,
    ) -> Result<Table> {
        self.alter(&AlterTable {
            set: set.clone(),
            unset: unset.to_vec(),
            columns: Vec::new(),
            compact_if_needed,
            policy,
        })
    }
}
