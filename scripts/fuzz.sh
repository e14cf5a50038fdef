#!/usr/bin/env bash
# Runs every cargo-fuzz target for SECONDS each (default 60). Needs the nightly toolchain and cargo-fuzz
# (`cargo install cargo-fuzz`). Crashes are saved under fuzz/artifacts/<target>/.
set -euo pipefail
seconds="${1:-60}"
cd "$(dirname "$0")/../fuzz"
for target in dv_entry dv_index_file manifest_decode manifest_mutate data_file_decode commit_messages_decode; do
  echo "== $target ($seconds s)"
  cargo +nightly fuzz run "$target" -- -max_total_time="$seconds" -rss_limit_mb=2048
done
