#!/usr/bin/env bash
# The main job's set-up on a fresh Debian 12 machine: installs only what
# fsbench needs to build and run, then builds the release binary, printing
# cargo's progress. Safe to run again. The tests' and benchmarks' peers
# (fio, Bonnie++, Postmark, IOzone, Java YCSB, ...) are
# scripts/setup-peers.sh's job, which scripts/test.sh runs.
set -euo pipefail
cd "$(dirname "$0")/.."
# To build: the RocksDB and SQLite stores link the system's libraries
# (bindgen needs libclang). To run: losetup and mount (util-linux) and the
# mkfs of the file systems experiments make (the kernel has ext2/3/4, xfs,
# btrfs; f2fs-tools for the f2fs targets that say the kernel lacks it).
pkgs=(pkg-config libclang-dev librocksdb-dev libsqlite3-dev util-linux e2fsprogs xfsprogs btrfs-progs)
. scripts/apt.sh
apt_install setup "${pkgs[@]}"
echo "setup: building the release binary (cargo build --release; about 4 to 5 minutes on 2 cores the first time)" >&2
cargo build --release
echo "setup: ready: target/release/fsbench" >&2
