#!/usr/bin/env bash
# What the tests and the bench scripts need beyond fsbench itself: the
# Debian peers and tools, IOzone and Java YCSB built from the shared peers'
# sources. scripts/test.sh runs it after scripts/setup.sh. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
# strace counts fsyncs; fio, postmark, bonnie++ (and its bon_csv2txt /
# bon_csv2html), db_bench (rocksdb-tools) and blktrace's blkparse, btt and
# iowatcher are the peers the tests and bench/ compare with; jfsutils,
# nilfs-tools and dosfstools make the file systems the kernel cannot mount
# (the tests check the refusal); groff renders `fsbench man`;
# python3-jsonschema validates real results against
# docs/schema/fsbench-result.schema.json (tests/result_schema.rs).
pkgs=(strace fio fio-examples python3-pandas python3-numpy jfsutils nilfs-tools dosfstools f2fs-tools
      postmark bonnie++ rocksdb-tools blktrace groff-base python3-jsonschema)
. scripts/apt.sh
apt_install setup-peers "${pkgs[@]}"
# IOzone is not in Debian main: built from the shared peers' source snapshot
# (bench/iozone-compare, tests/iozone_peer.rs) when that folder exists. A
# missing folder or a failed build does not fail the set-up: those skip.
if iz=$(scripts/build-iozone.sh 2>/dev/null | tail -n1) && [ -x "$iz" ]; then
  echo "setup-peers: IOzone: $iz" >&2
else
  echo "setup-peers: IOzone not built (scripts/build-iozone.sh: no peers folder or the build failed); its comparisons will skip" >&2
fi
# Java YCSB with its RocksDB binding (tests/ycsb_rocksdb_interop.rs), the
# same tolerant way.
if ycp=$(scripts/build-ycsb.sh 2>/dev/null | tail -n1) && [ -s "$ycp" ]; then
  echo "setup-peers: YCSB classpath: $ycp" >&2
else
  echo "setup-peers: Java YCSB not built (scripts/build-ycsb.sh: no peers folder or the build failed); its interop tests will skip" >&2
fi
