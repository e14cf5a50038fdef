//! Parquet columns into the table's types, exactly: [`strata_format::exact_cast`] (a cast within a type family
//! taken only where casting back gives the value read), and string columns into other types through the
//! same text rules as csv and jsonl.

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef};
use arrow_cast::cast::{cast_with_options, CastOptions};
use arrow_schema::DataType as ArrowType;
use strata_format::{arrow_family, check_values, exact_cast, paimon_family, plain, CastRefusal, TypeFamily};
use strata_spec::DataType;

use super::builder::{ColumnBuilder, Value};

/// Why a column or one of its values is refused (the first row, its value as shown, and the reason).
pub(crate) type Refusal = CastRefusal;

/// `array` as a column of type `t`, every value unchanged, or the first value that cannot be: text into a
/// column of another type by the csv and jsonl rules, everything else by [`exact_cast`].
pub(crate) fn exact(array: &ArrayRef, t: &DataType) -> Result<ArrayRef, Refusal> {
    let array = plain(array)?;
    if arrow_family(array.data_type()) == TypeFamily::Text && paimon_family(&t.root) != TypeFamily::Text {
        let parsed = parse_text(&array, t)?;
        check_values(&parsed, t)?;
        return Ok(parsed);
    }
    exact_cast(&array, t)
}

/// Strings parsed by the same rules as csv and jsonl text.
fn parse_text(array: &ArrayRef, t: &DataType) -> Result<ArrayRef, Refusal> {
    let strings = cast_with_options(array, &ArrowType::Utf8, &CastOptions::default())
        .map_err(|e| Refusal::column(format!("cannot read its strings: {e}")))?;
    let strings = strings.as_string::<i32>();
    let mut b = ColumnBuilder::new(t.with_nullable(true));
    for (row, v) in strings.iter().enumerate() {
        let value = v.map_or(Value::Null, Value::Text);
        b.push(value).map_err(|reason| Refusal::at(array.as_ref(), row, reason))?;
    }
    Ok(b.finish())
}
