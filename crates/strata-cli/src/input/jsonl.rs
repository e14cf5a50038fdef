//! JSON lines: one object per line, fields matched to columns by name. Each line is parsed into raw
//! values (serde_json's `RawValue`), so a number reaches its column as written (1.9 stays 1.9 until a
//! BIGINT refuses it; 12.345 keeps every digit for a DECIMAL).

use std::borrow::Cow;
use std::fmt;
use std::io::{BufRead, BufReader};
use std::sync::Arc;

use serde::de::{DeserializeSeed, MapAccess, Visitor};
use serde_json::value::RawValue;
use strata_spec::{Error, Result};

use super::builder::{ColumnBuilder, Value};
use super::{open_file, skip_bom, value_error, InputOptions, RowRead, RowReader, TableColumns, TextRows, TextSource};

/// A jsonl file being read.
pub(crate) struct JsonlSource {
    path: String,
    reader: BufReader<std::fs::File>,
    ignore_unknown: bool,
    line_no: u64,
    buf: Vec<u8>,
}

impl JsonlSource {
    pub(crate) fn open(path: &str, columns: Arc<TableColumns>, opts: &InputOptions) -> Result<TextSource<Self>> {
        let mut reader = BufReader::with_capacity(1 << 16, open_file(path)?);
        let bytes = skip_bom(&mut reader, path)?;
        let source = JsonlSource {
            path: path.to_string(),
            reader,
            ignore_unknown: opts.ignore_unknown_fields,
            line_no: 0,
            buf: Vec::new(),
        };
        Ok(TextSource { reader: source, rows: TextRows::new(columns, opts, bytes) })
    }
}

impl RowReader for JsonlSource {
    fn read_row(&mut self, rows: &mut TextRows) -> Result<RowRead> {
        self.buf.clear();
        let n = self.reader.read_until(b'\n', &mut self.buf).map_err(|e| Error::io(&self.path, e))?;
        if n == 0 {
            return Ok(RowRead::End);
        }
        self.line_no += 1;
        rows.bytes += n as u64;
        let line = self.buf.strip_suffix(b"\n").unwrap_or(&self.buf);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(RowRead::Blank);
        }
        let place = Place { path: &self.path, line: self.line_no };
        let text = std::str::from_utf8(line)
            .map_err(|e| place.error(format!("the line is not UTF-8 (byte {})", e.valid_up_to() + 1)))?;
        read_line(text, &place, &rows.columns, &mut rows.builders, self.ignore_unknown)?;
        Ok(RowRead::Row)
    }
}

/// Where a line is.
struct Place<'a> {
    path: &'a str,
    line: u64,
}

impl Place<'_> {
    fn error(&self, message: impl Into<String>) -> Error {
        Error::invalid(format!("input {} line {}", self.path, self.line), message)
    }
}

/// Parses one line and appends its values to the columns (a refusal ends the whole write, so a half-added
/// row never reaches the table).
fn read_line(
    text: &str,
    place: &Place<'_>,
    columns: &TableColumns,
    builders: &mut [ColumnBuilder],
    ignore_unknown: bool,
) -> Result<()> {
    let mut de = serde_json::Deserializer::from_str(text);
    let fields = LineSeed { columns, keep_unknown: !ignore_unknown }
        .deserialize(&mut de)
        .and_then(|f| de.end().map(|()| f))
        .map_err(|e| place.error(json_message(&e)))?;
    if let Some(name) = fields.unknown {
        return Err(place.error(columns.unknown_field(&name)));
    }
    if let Some(i) = fields.duplicate {
        return Err(place.error(format!("field '{}' is given twice", columns.name(i))));
    }
    for (i, (slot, builder)) in fields.slots.iter().zip(builders.iter_mut()).enumerate() {
        let refuse =
            |value: &str, reason: &str| value_error(place.path, "line", place.line, columns.name(i), value, reason);
        let Some(raw) = slot else {
            builder.push(Value::Null).map_err(|_| {
                place.error(format!("there is no field '{}', and the column is NOT NULL", columns.name(i)))
            })?;
            continue;
        };
        let raw = raw.get().trim();
        let text: Cow<'_, str>;
        let value = match raw.as_bytes().first() {
            Some(b'n') => Value::Null,
            Some(b't') => Value::Bool(true),
            Some(b'f') => Value::Bool(false),
            Some(b'"') => {
                text = match raw.contains('\\') {
                    false => Cow::Borrowed(&raw[1..raw.len() - 1]),
                    true => Cow::Owned(serde_json::from_str::<String>(raw).map_err(|e| refuse(raw, &e.to_string()))?),
                };
                Value::Text(&text)
            }
            Some(b'{' | b'[') => {
                let t = columns.data_type(i);
                return Err(refuse(raw, &format!("is a nested JSON value; the column is {}", t.root)));
            }
            _ => Value::Number(raw),
        };
        builder.push(value).map_err(|reason| refuse(raw, &reason))?;
    }
    Ok(())
}

/// serde_json's message without its "at line 1 column N" (the line is ours; the column is a character).
fn json_message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let message = text.rsplit_once(" at line ").map_or(text.as_str(), |(m, _)| m);
    format!("the line is not one JSON object: {message} (at character {})", e.column())
}

/// A line's fields: the raw value of each column given, and the first unknown or repeated field.
struct Fields<'de> {
    slots: Vec<Option<&'de RawValue>>,
    unknown: Option<String>,
    duplicate: Option<usize>,
}

/// Reads a JSON object into [`Fields`] without building a map.
struct LineSeed<'c> {
    columns: &'c TableColumns,
    keep_unknown: bool,
}

impl<'de> DeserializeSeed<'de> for LineSeed<'_> {
    type Value = Fields<'de>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<Fields<'de>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for LineSeed<'_> {
    type Value = Fields<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("one JSON object per line")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Fields<'de>, A::Error> {
        let mut fields = Fields { slots: vec![None; self.columns.len()], unknown: None, duplicate: None };
        while let Some(key) = map.next_key_seed(KeySeed { columns: self.columns, keep_unknown: self.keep_unknown })? {
            let value: &'de RawValue = map.next_value()?;
            match key {
                Key::Column(i) if fields.slots[i].is_some() => {
                    fields.duplicate.get_or_insert(i);
                }
                Key::Column(i) => fields.slots[i] = Some(value),
                Key::Unknown(name) => {
                    fields.unknown.get_or_insert(name);
                }
                Key::Dropped => {}
            }
        }
        Ok(fields)
    }
}

enum Key {
    Column(usize),
    Unknown(String),
    Dropped,
}

struct KeySeed<'c> {
    columns: &'c TableColumns,
    keep_unknown: bool,
}

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = Key;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<Key, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for KeySeed<'_> {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<Key, E> {
        Ok(match self.columns.index(v) {
            Some(i) => Key::Column(i),
            None if self.keep_unknown => Key::Unknown(v.to_string()),
            None => Key::Dropped,
        })
    }
}
