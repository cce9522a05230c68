#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run): set-up and build, then the
# style and lint checks, then every test binary (--no-fail-fast: one failing
# test never hides the others).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo fmt --check
cargo clippy --all-targets --release --quiet -- -D warnings
cargo test --release --no-fail-fast
