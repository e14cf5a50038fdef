//! CSV (RFC 4180): comma-separated, `"` quotes fields (a quote inside is doubled; a quoted field may span
//! lines). Fields go to columns by the header's names, or by `--columns` for a file without a header. An
//! empty unquoted field is null; a quoted empty field is the empty string in a string or binary column
//! (and null in others, as files that quote every field write nulls).

use std::io::{BufRead, BufReader};
use std::sync::Arc;

use strata_spec::{Error, Result, TypeRoot};

use super::builder::Value;
use super::{open_file, skip_bom, value_error, InputOptions, RowRead, RowReader, TableColumns, TextRows, TextSource};

/// A field of the record being read: its range in the record text, and whether it was quoted.
#[derive(Debug, Clone, Copy)]
struct FieldSpan {
    start: usize,
    end: usize,
    quoted: bool,
}

/// A CSV file being read.
pub(crate) struct CsvSource {
    path: String,
    reader: BufReader<std::fs::File>,
    /// The column of each field of a record (`None`: dropped).
    mapping: Vec<Option<usize>>,
    /// Columns no field gives (nullable): null in every row.
    absent: Vec<usize>,
    /// Whether each column takes a quoted empty field as the empty string.
    empty_is_value: Vec<bool>,
    /// Where the field names came from: "the header" or "--columns".
    names_from: &'static str,
    line_no: u64,
    line: Vec<u8>,
    text: Vec<u8>,
    fields: Vec<FieldSpan>,
}

impl CsvSource {
    pub(crate) fn open(path: &str, columns: Arc<TableColumns>, opts: &InputOptions) -> Result<TextSource<Self>> {
        let mut reader = BufReader::with_capacity(1 << 16, open_file(path)?);
        let bytes = skip_bom(&mut reader, path)?;
        let empty_is_value = (0..columns.len())
            .map(|i| {
                matches!(
                    columns.data_type(i).root,
                    TypeRoot::Char(_) | TypeRoot::VarChar(_) | TypeRoot::Binary(_) | TypeRoot::VarBinary(_)
                )
            })
            .collect();
        let mut source = CsvSource {
            path: path.to_string(),
            reader,
            mapping: Vec::new(),
            absent: Vec::new(),
            empty_is_value,
            names_from: if opts.columns.is_some() { "--columns" } else { "the header" },
            line_no: 0,
            line: Vec::new(),
            text: Vec::new(),
            fields: Vec::new(),
        };
        let mut rows = TextRows::new(columns, opts, bytes);
        let (names, place, hint) = match &opts.columns {
            Some(names) => (names.clone(), format!("--columns for {path}"), String::new()),
            None => {
                let line = source.read_record(&mut rows)?.ok_or_else(|| {
                    Error::invalid(
                        format!("input {path}"),
                        "the file is empty: a csv file starts with a header line (or give --columns)",
                    )
                })?;
                let names = (0..source.fields.len()).map(|f| source.field(f).trim().to_string()).collect();
                let hint = "; if the file has no header line, give its columns in order with --columns";
                (names, format!("input {path} line {line} (the header)"), hint.to_string())
            }
        };
        source.mapping = rows.columns.map_fields(&names, opts.ignore_unknown_fields, &place, &hint)?;
        source.absent = (0..rows.columns.len()).filter(|i| !source.mapping.contains(&Some(*i))).collect();
        Ok(TextSource { reader: source, rows })
    }

    /// Field `f` of the record just read.
    fn field(&self, f: usize) -> &str {
        field_text(&self.text, self.fields[f])
    }

    fn error(&self, line: u64, message: impl Into<String>) -> Error {
        Error::invalid(format!("input {} line {line}", self.path), message)
    }

    /// Reads the next record into `text` and `fields`; the line it starts on, or `None` at the end. Blank
    /// lines between records are skipped.
    fn read_record(&mut self, rows: &mut TextRows) -> Result<Option<u64>> {
        self.text.clear();
        self.fields.clear();
        let mut start_line = None;
        let mut state = State::FieldStart;
        let mut field_start = 0;
        loop {
            self.line.clear();
            let n = self.reader.read_until(b'\n', &mut self.line).map_err(|e| Error::io(&self.path, e))?;
            if n == 0 {
                return match (start_line, state) {
                    (None, _) => Ok(None),
                    (Some(l), _) => Err(self.error(l, "a quoted field is not closed before the end of the file")),
                };
            }
            self.line_no += 1;
            rows.bytes += n as u64;
            let content = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
            let content = content.strip_suffix(b"\r").unwrap_or(content);
            if start_line.is_none() && content.is_empty() {
                continue;
            }
            let line = *start_line.get_or_insert(self.line_no);
            for &b in content {
                state = match (state, b) {
                    (State::FieldStart, b'"') => State::Quoted,
                    (State::FieldStart | State::Unquoted, b',') => {
                        self.fields.push(FieldSpan { start: field_start, end: self.text.len(), quoted: false });
                        field_start = self.text.len();
                        State::FieldStart
                    }
                    (State::Unquoted, b'"') => {
                        return Err(self.error(
                            self.line_no,
                            format!(
                                "field {} has a quote inside an unquoted value (quote the whole field and double the quotes in it)",
                                self.fields.len() + 1
                            ),
                        ))
                    }
                    (State::FieldStart | State::Unquoted, b) => {
                        self.text.push(b);
                        State::Unquoted
                    }
                    (State::Quoted, b'"') => State::QuoteInQuoted,
                    (State::Quoted, b) => {
                        self.text.push(b);
                        State::Quoted
                    }
                    (State::QuoteInQuoted, b'"') => {
                        self.text.push(b'"');
                        State::Quoted
                    }
                    (State::QuoteInQuoted, b',') => {
                        self.fields.push(FieldSpan { start: field_start, end: self.text.len(), quoted: true });
                        field_start = self.text.len();
                        State::FieldStart
                    }
                    (State::QuoteInQuoted, _) => {
                        return Err(self.error(
                            self.line_no,
                            format!("field {} has text after its closing quote", self.fields.len() + 1),
                        ))
                    }
                };
            }
            if state == State::Quoted {
                // The line break is part of the quoted value, as written.
                let brk = &self.line[content.len()..];
                self.text.extend_from_slice(brk);
                continue;
            }
            let quoted = state == State::QuoteInQuoted;
            self.fields.push(FieldSpan { start: field_start, end: self.text.len(), quoted });
            if let Err(e) = std::str::from_utf8(&self.text) {
                return Err(
                    self.error(line, format!("the record is not UTF-8 (byte {} of its text)", e.valid_up_to() + 1))
                );
            }
            return Ok(Some(line));
        }
    }

    /// Appends the record just read (starting on `line`) to the columns.
    fn push_record(&mut self, rows: &mut TextRows, line: u64) -> Result<()> {
        if self.fields.len() != self.mapping.len() {
            return Err(self.error(
                line,
                format!("the record has {} fields; {} has {}", self.fields.len(), self.names_from, self.mapping.len()),
            ));
        }
        for f in 0..self.fields.len() {
            let Some(i) = self.mapping[f] else { continue };
            let span = self.fields[f];
            let text = field_text(&self.text, span);
            let value = match (text.is_empty(), span.quoted && self.empty_is_value[i]) {
                (true, false) => Value::Null,
                _ => Value::Text(text),
            };
            if let Err(reason) = rows.builders[i].push(value) {
                let shown = match (span.quoted, text.is_empty()) {
                    (true, _) => format!("\"{text}\""),
                    (false, true) => "an empty field (null)".to_string(),
                    (false, false) => text.to_string(),
                };
                return Err(value_error(&self.path, "line", line, rows.columns.name(i), &shown, &reason));
            }
        }
        for &i in &self.absent {
            // Absent columns are nullable (the header check refuses a file without a NOT NULL column).
            rows.builders[i].push(Value::Null).map_err(|reason| self.error(line, reason))?;
        }
        Ok(())
    }
}

/// A field of a record's text.
fn field_text(text: &[u8], s: FieldSpan) -> &str {
    // The record text was checked to be UTF-8, and fields are split at ASCII bytes.
    std::str::from_utf8(&text[s.start..s.end]).unwrap_or_default()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    FieldStart,
    Unquoted,
    Quoted,
    QuoteInQuoted,
}

impl RowReader for CsvSource {
    fn read_row(&mut self, rows: &mut TextRows) -> Result<RowRead> {
        let Some(line) = self.read_record(rows)? else { return Ok(RowRead::End) };
        self.push_record(rows, line)?;
        Ok(RowRead::Row)
    }
}
