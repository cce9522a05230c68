#!/usr/bin/env bash
# Installs what fsbench's build, tests and benchmarks need on a fresh Debian 12
# machine, then builds the release binary. Safe to run again.
set -euo pipefail
need=()
for pkg in strace fio fio-examples python3-pandas python3-numpy util-linux e2fsprogs xfsprogs btrfs-progs f2fs-tools jfsutils nilfs-tools dosfstools postmark bonnie++ librocksdb-dev libclang-dev rocksdb-tools libsqlite3-dev pkg-config blktrace; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 "${need[@]}" >/dev/null
  else
    echo "setup: not root, cannot install ${need[*]}; tests that need them will skip" >&2
  fi
fi
# IOzone is not in Debian main: build it from the shared peers' source snapshot
# (for bench/iozone-compare and tests/iozone_peer.rs) when that folder exists.
# A missing folder or a failed build does not fail the set-up.
if iz=$("$(dirname "$0")/build-iozone.sh" 2>/dev/null | tail -n1) && [ -x "$iz" ]; then
  echo "setup: IOzone: $iz" >&2
else
  echo "setup: IOzone not built (scripts/build-iozone.sh: no peers folder or the build failed); its comparisons will skip" >&2
fi
# Java YCSB with its RocksDB binding (for tests/ycsb_rocksdb_interop.rs), the
# same tolerant way.
if ycp=$("$(dirname "$0")/build-ycsb.sh" 2>/dev/null | tail -n1) && [ -s "$ycp" ]; then
  echo "setup: YCSB classpath: $ycp" >&2
else
  echo "setup: Java YCSB not built (scripts/build-ycsb.sh: no peers folder or the build failed); its interop tests will skip" >&2
fi
cargo build --release --quiet
