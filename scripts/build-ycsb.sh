#!/usr/bin/env bash
# Builds Java YCSB with its RocksDB binding (the peer of fsbench's `ycsb`
# command, see tests/ycsb_rocksdb_interop.rs) from the source snapshot in the
# shared peers folder, with the peers' own build.sh, and prints the path of
# its classpath file on the last line. Run YCSB with
#   java -cp "$(cat CLASSPATH_FILE)" site.ycsb.Client -load|-t \
#     -db site.ycsb.db.rocksdb.RocksDBClient -P WORKLOAD -p rocksdb.dir=DIR
# (the workload files are in workloads/ next to the classpath file).
#
# It builds into $FSBENCH_YCSB_OUT, default /var/tmp/fsbench-peers (build.sh's
# own default, where the interop test looks): the classpath names files
# there and in ~/.m2 by absolute path. Maven's downloads make the first build
# slow; build.sh installs maven and a JDK (root needed).
#
# The peers folder (the one holding build.sh and ycsb-*.tar.gz) is found as
# scripts/build-iozone.sh finds it: $FSBENCH_PEERS if it holds build.sh, else
# ../shared/peers next to the repository or next to the main checkout.
# Exit 2 (with the reason on stderr) when there is no peers folder; 1 when
# the build fails. Safe to run again: a built YCSB is not rebuilt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${FSBENCH_YCSB_OUT:-/var/tmp/fsbench-peers}
cp_file="$out/ycsb/classpath"
if [ -s "$cp_file" ]; then echo "$cp_file"; exit 0; fi

. "$root/scripts/peers.sh"
find_peers ycsb
mkdir -p "$out"
FSBENCH_PEERS="$out" "$peers/build.sh" ycsb >&2 || { echo "build-ycsb: $peers/build.sh ycsb failed (log: $out/ycsb.log)" >&2; exit 1; }
[ -s "$cp_file" ] || { echo "build-ycsb: build.sh did not produce $cp_file" >&2; exit 1; }
echo "$cp_file"
