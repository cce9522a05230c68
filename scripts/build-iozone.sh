#!/usr/bin/env bash
# Builds IOzone 3.471 (a benchmark peer, see bench/iozone-compare) from the
# source snapshot in the shared peers folder into target/peers/iozone/, with
# the peers' own build.sh, and prints the binary's path on the last line.
# Nothing of IOzone is committed: its licence reserves derivative works.
#
# The peers folder (the one holding build.sh and iozone-*.tar.gz) is found
# by scripts/peers.sh, the first of:
#   $FSBENCH_PEERS, if it holds build.sh (note: build.sh itself reads
#     FSBENCH_PEERS as its *output* folder; this script always sets it to
#     target/peers when calling build.sh)
#   ../shared/peers next to the repository
#   ../shared/peers next to the main checkout (when this is a git worktree)
# Exit 2 (with the reason on stderr) when there is no peers folder; 1 when
# the build fails. Safe to run again: a built IOzone is not rebuilt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/target/peers"
bin="$out/iozone/iozone"
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi

. "$root/scripts/peers.sh"
find_peers iozone
mkdir -p "$out"
FSBENCH_PEERS="$out" "$peers/build.sh" iozone >&2 || { echo "build-iozone: $peers/build.sh iozone failed (log: $out/iozone.log)" >&2; exit 1; }
[ -x "$bin" ] || { echo "build-iozone: build.sh did not produce $bin" >&2; exit 1; }
echo "$bin"
