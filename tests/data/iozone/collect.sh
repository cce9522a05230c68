#!/usr/bin/env bash
# Regenerates the IOzone reference samples in this folder by running the real
# IOzone (built by scripts/build-iozone.sh). Only IOzone's *output* is stored
# here, never its code. Each sample NAME has:
#   NAME.cmd  the exact command line (run with cwd = $W, IOzone on PATH)
#   NAME.out  its stdout, byte for byte
#   NAME.err  its stderr (only when not empty)
#   NAME.rc   its exit code (only when not 0)
# Usage: tests/data/iozone/collect.sh [NAME...]   (default: all)
# Timings differ on every run, so regenerating changes the numbers; the
# layout (what the tests compare) does not.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
iz=${IOZONE:-$("$root/scripts/build-iozone.sh" | tail -n1)}
[ -x "$iz" ] || { echo "no IOzone binary ($iz)" >&2; exit 1; }
export PATH="$(dirname "$iz"):$PATH"   # so argv[0], echoed in "Command line used:", is plain "iozone"
W=/dev/shm/iozone-samples
F=$W/iozone.tmp
rm -rf "$W"; mkdir -p "$W/notmnt"
trap 'rm -rf "$W"' EXIT
want=("$@")

sample() { # sample NAME TIMEOUT ARGS...
  local name=$1 t=$2; shift 2
  if [ ${#want[@]} -gt 0 ] && [[ " ${want[*]} " != *" $name "* ]]; then return; fi
  echo "iozone $*" > "$here/$name.cmd"
  (cd "$W" && timeout "$t" iozone "$@" > "$here/$name.out" 2> "$here/$name.err")
  local rc=$?
  [ -s "$here/$name.err" ] || rm -f "$here/$name.err"
  if [ $rc -ne 0 ]; then echo $rc > "$here/$name.rc"; else rm -f "$here/$name.rc"; fi
  rm -f "$W"/iozone.tmp "$W"/iozone.DUMMY.*
  echo "$name: rc=$rc"
}

sample a-auto-R              60 -a -n 64k -g 1m -y 4k -q 64k -i 0 -i 1 -i 2 -R -f $F
sample a-auto-R-short-rows    60 -a -n 64k -g 512k -y 4k -q 256k -i 0 -R -f $F
sample b-auto-R-noretest     60 -a -n 64k -g 1m -y 4k -q 64k -i 0 -i 1 -i 2 -R -+n -f $F
sample c-crossover-64m       120 -a -n 16m -g 64m -i 0 -R -f $F
sample c-crossover-32m       120 -a -n 16m -g 32m -i 0 -R -f $F
sample c-crossover-32m-z     120 -a -z -n 16m -g 32m -i 0 -R -f $F
sample d-table-all           60 -s 1m -r 64k -i 0 -i 1 -i 2 -i 3 -i 4 -i 5 -i 6 -i 7 -f $F
sample d-table-all-R         60 -s 1m -r 64k -i 0 -i 1 -i 2 -i 3 -i 4 -i 5 -i 6 -i 7 -R -f $F
sample d-table-default       60 -s 1m -r 64k -f $F
sample e-pread-E             60 -E -s 1m -r 64k -i 0 -i 9 -i 10 -i 11 -i 12 -f $F
sample e-pread-E-R           60 -E -s 1m -r 64k -i 0 -i 9 -i 10 -i 11 -i 12 -R -f $F
sample e-default-E           60 -E -s 1m -r 64k -f $F
sample f-throughput          60 -t 2 -s 1m -r 64k -i 0 -i 1
sample f-throughput-R        60 -t 2 -s 1m -r 64k -i 0 -i 1 -R
sample f-throughput-F        60 -t 2 -s 1m -r 64k -i 0 -i 1 -F $W/f1 $W/f2
sample f-throughput-all-R    120 -t 2 -s 1m -r 64k -E -i 0 -i 1 -i 2 -i 3 -i 4 -i 5 -i 6 -i 7 -i 8 -i 9 -i 10 -R
sample g-ops-O               60 -O -s 1m -r 64k -i 0 -i 1 -i 2 -f $F
sample g-ops-O-R             60 -O -a -n 64k -g 256k -y 4k -q 64k -i 0 -i 1 -R -f $F
sample g-latency-N           60 -N -s 1m -r 64k -i 0 -i 1 -i 2 -f $F
sample g-latency-N-R         60 -N -a -n 64k -g 256k -y 4k -q 64k -i 0 -i 1 -R -f $F
sample g-throughput-O        60 -O -t 2 -s 1m -r 64k -i 0 -i 1
sample h-cpu-u               60 -+u -s 1m -r 64k -i 0 -i 1 -f $F
sample h-cpu-u-R             60 -+u -a -n 64k -g 256k -y 4k -q 64k -i 0 -i 1 -R -f $F
sample h-cpu-u-throughput    60 -+u -t 2 -s 1m -r 64k -i 0 -i 1
sample h-cpu-u-throughput-R  60 -+u -t 2 -s 1m -r 64k -i 0 -i 1 -R

# Bad input. IOzone's -U retries umount 199 times, sleeping 1, 2, ... s
# (hours): the sample is cut by timeout after 20 s (rc 124 is timeout's).
sample err-t-with-a          30 -t 2 -a -f $F
sample err-q-32m             30 -q 32m -f $F
sample err-r-over-s          30 -r 128k -s 64k -f $F
sample err-i-99              30 -i 99 -f $F
sample err-U-not-mountpoint  20 -U $W/notmnt -f $F
exit 0
