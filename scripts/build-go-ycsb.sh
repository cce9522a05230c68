#!/usr/bin/env bash
# Builds go-ycsb v1.0.3 (PingCAP's Go port of YCSB, a peer of
# bench/ycsb-compare's client-overhead row) from the Go module proxy with the
# machine's Go toolchain, and prints the binary's path on the last line.
# `go install …@v1.0.3` refuses the module (its go.mod has replace
# directives), so the module's source is downloaded and built as a main
# module. Builds into $FSBENCH_YCSB_OUT (default /var/tmp/fsbench-peers);
# safe to run again. Exit 2 without a Go toolchain, 1 when the build fails.
set -euo pipefail
out=${FSBENCH_YCSB_OUT:-/var/tmp/fsbench-peers}/go-ycsb
bin="$out/go-ycsb"
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi
go=$(command -v go || echo /usr/local/go/bin/go)
[ -x "$go" ] || { echo "build-go-ycsb: no Go toolchain (go not found)" >&2; exit 2; }
mkdir -p "$out"
export GOPATH="$out/gopath" GOFLAGS=-mod=mod
dir=$("$go" mod download -json github.com/pingcap/go-ycsb@v1.0.3 | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
[ -d "$dir" ] || { echo "build-go-ycsb: could not download github.com/pingcap/go-ycsb@v1.0.3" >&2; exit 1; }
rm -rf "$out/src" && cp -r "$dir" "$out/src" && chmod -R u+w "$out/src"
(cd "$out/src" && "$go" build -o "$bin" ./cmd/go-ycsb) >"$out/build.log" 2>&1 \
  || { tail -n 20 "$out/build.log" >&2; echo "build-go-ycsb: build failed (log: $out/build.log)" >&2; exit 1; }
echo "$bin"
