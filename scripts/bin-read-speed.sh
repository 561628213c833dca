#!/usr/bin/env bash
# Read throughput of a large .bin file against dd on the same file, all from a cold page cache
# (the file's pages are evicted with `dd iflag=nocache count=0` before every run): dd to /dev/null
# (the disk alone), dd into /dev/shm (the disk into fresh memory, which a reader must fill too),
# and `nearfield convert --input FILE` (read and check, no output).
# Usage: scripts/bin-read-speed.sh [BIN_DIR]   (default build/bin; N=1e8 particles, REPS=3, KEEP=1
# keeps the file, DIR=where it goes). Needs about 5.6 GB of disk and twice that in memory.
set -euo pipefail
bin="${1:-build/bin}"
n="${N:-100000000}"
reps="${REPS:-3}"
dir="${DIR:-$(dirname "$bin")/bin-read-speed}"
mkdir -p "$dir"
file="$dir/plummer-$n.bin"
df -h "$dir" | tail -1 | awk '{print "disk: " $4 " free of " $2}'
[ -f "$file" ] || "$bin/nearfield" generate --dist plummer --dim 3 --n "$n" --output "$file"
shm="/dev/shm/nearfield-read-speed.$$"
trap 'rm -f "$shm"' EXIT
evict() { dd if="$file" iflag=nocache count=0 status=none; }
for r in $(seq "$reps"); do
  evict
  echo "dd to /dev/null: $(dd if="$file" of=/dev/null bs=4M 2>&1 | tail -1)"
  evict
  echo "dd to /dev/shm:  $(dd if="$file" of="$shm" bs=4M 2>&1 | tail -1)"
  rm -f "$shm"
  evict
  echo "nearfield:       $("$bin/nearfield" convert --input "$file" | sed 's/.*): //')"
done
[ "${KEEP:-0}" = 1 ] || rm -f "$file"
