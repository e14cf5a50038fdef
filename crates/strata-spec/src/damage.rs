//! Telling a damaged name from a name Strata does not know.
//!
//! Readers skip what they do not know (a newer writer's snapshot field, a footer entry of another engine,
//! an index type of a later Paimon), so a single flipped bit in a name Strata does know would turn what it
//! names into something skipped: a snapshot losing its deletion vectors, a file losing its checksums. A name
//! one edit away from a known one is taken for damage instead: no Paimon name is one edit from another.

/// Whether `a` and `b` differ by exactly one substituted, inserted or removed byte.
pub fn one_edit_apart(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if long.len() - short.len() > 1 || a == b {
        return false;
    }
    let prefix = short.iter().zip(long).take_while(|(x, y)| x == y).count();
    if short.len() == long.len() {
        short[prefix + 1..] == long[prefix + 1..]
    } else {
        short[prefix..] == long[prefix + 1..]
    }
}

/// The name among `known` that `name` looks like a damaged copy of (one edit away, not equal).
pub fn damaged_form_of<'k>(name: &str, known: &[&'k str]) -> Option<&'k str> {
    known.iter().copied().find(|k| one_edit_apart(name, k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_edit_is_a_substitution_an_insertion_or_a_removal() {
        assert!(one_edit_apart("indexManifesu", "indexManifest"));
        assert!(one_edit_apart("indexManifes", "indexManifest"));
        assert!(one_edit_apart("xindexManifest", "indexManifest"));
        assert!(!one_edit_apart("indexManifest", "indexManifest"));
        assert!(!one_edit_apart("tagCreateTime", "indexManifest"));
        assert!(!one_edit_apart("HASX_", "HASH"));
        assert_eq!(damaged_form_of("DELETION_VECTORQ", &["HASH", "DELETION_VECTORS"]), Some("DELETION_VECTORS"));
        assert_eq!(damaged_form_of("HASH", &["HASH", "DELETION_VECTORS"]), None);
        // A multi-byte character is compared by its bytes, never split.
        assert!(!one_edit_apart("HAS\u{e9}", "HASH"));
    }
}
