#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run): set-up and build, the
# tests' peers, then the style and lint checks, then every test binary
# (--no-fail-fast: one failing test never hides the others).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/setup-peers.sh
cargo fmt --check
cargo clippy --all-targets --release --quiet -- -D warnings
cargo test --release --no-fail-fast
