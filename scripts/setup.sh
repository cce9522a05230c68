#!/usr/bin/env bash
# Installs what fsbench's build, tests and benchmarks need on a fresh Debian 12
# machine, then builds the release binary. Safe to run again.
set -euo pipefail
need=()
for pkg in strace fio fio-examples python3-pandas python3-numpy util-linux e2fsprogs xfsprogs btrfs-progs postmark; do
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
cargo build --release --quiet
