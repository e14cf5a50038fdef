#!/usr/bin/env bash
# How long the builds take on this machine (issue 50), each from a fresh target directory:
#   release  the cold release build of the `strata` binary (what `cargo run --release -- demo` builds first);
#   test     the cold `cargo test --workspace --no-run` (the README's test command, before its tests run);
#   touch    the same test build again after touching one file of strata-table (the edit-and-check loop).
# Downloads are not timed (`cargo fetch` first). Each line gives wall time and CPU time (user + system);
# cargo's --timings report of each build lands in OUT (default target/build-times), with the build's log.
# Usage: bash scripts/build-times.sh [release] [test] [touch]   (default: all three, in that order; touch
# needs test's target directory and runs test first when it was not asked for).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-target/build-times}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(release test touch)
scratch="$(mktemp -d "${TMPDIR:-/tmp}/strata-build-times.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
cargo fetch --locked >/dev/null 2>&1 || cargo fetch >/dev/null

# timed LABEL TARGET_DIR CARGO_ARGS...: runs cargo with --timings in TARGET_DIR, prints one line.
timed() {
  local label="$1" dir="$2"
  shift 2
  local t0 t1 cpu
  t0=$(date +%s.%N)
  if ! CARGO_TARGET_DIR="$dir" /usr/bin/time -f "%U %S" -o "$scratch/$label.cpu" \
    cargo "$@" --timings >"$out/$label.log" 2>&1; then
    echo "$label: cargo $* failed; its log is $out/$label.log" >&2
    exit 1
  fi
  t1=$(date +%s.%N)
  cpu=$(awk '{ printf "%.0f", $1 + $2 }' "$scratch/$label.cpu")
  cp "$dir/cargo-timings/cargo-timing.html" "$out/$label.html" 2>/dev/null || true
  awk -v l="$label" -v a="$*" -v t0="$t0" -v t1="$t1" -v c="$cpu" 'BEGIN {
    w = t1 - t0; printf "%-8s %4d min %02d s wall, %5d s CPU   cargo %s\n", l, int(w / 60), int(w) % 60, c, a }'
}

echo "$(nproc) cores, $(rustc --version), $(date -u +%Y-%m-%dT%H:%MZ)"
test_dir=""
for step in "${steps[@]}"; do
  case "$step" in
    release)
      timed release "$scratch/release" build --release --bin strata
      rm -rf "$scratch/release"
      ;;
    test)
      test_dir="$scratch/test"
      timed test "$test_dir" test --workspace --no-run
      ;;
    touch)
      if [ -z "$test_dir" ]; then
        test_dir="$scratch/test"
        timed test "$test_dir" test --workspace --no-run
      fi
      touch crates/strata-table/src/lib.rs
      timed touch "$test_dir" test --workspace --no-run
      ;;
    *) echo "unknown step '$step' (release, test, touch)" >&2; exit 2 ;;
  esac
done
