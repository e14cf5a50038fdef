//! What every fuzz target shares.

/// libfuzzer-sys aborts in its panic hook, before `catch_unwind` can run: a panic Strata contains at a
/// decoder boundary would count as a crash. A silent hook lets containment work; a panic that escapes
/// still reaches libfuzzer-sys's own `catch_unwind` around the target, which reports it.
pub fn contain_panics_like_strata() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| std::panic::set_hook(Box::new(|_| {})));
}
