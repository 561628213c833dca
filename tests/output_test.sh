#!/usr/bin/env bash
# Outputs as a user meets them, through the nearfield binary (docs/design.md §6): '-' in a pipe,
# /dev/full, a FIFO with a reader, a symbolic link, and Ctrl-C / SIGTERM in the middle of a large
# write, which must leave no temporary file behind.
# Usage: output_test.sh NEARFIELD_BINARY
set -uo pipefail
nearfield="$(realpath "$1")"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail() { echo "FAIL: $*"; exit 1; }
forces=(forces --dist uniform --n 200 --level 2 --kernel cpu-serial)

# '-': the data on stdout, the messages on stderr; the first rows through a pipe.
"$nearfield" "${forces[@]}" --output - >data.csv 2>msg.txt || fail "--output - failed"
[ "$(head -1 data.csv)" = "id,ax,ay" ] || fail "--output -: no header on stdout"
[ "$(wc -l <data.csv)" -eq 201 ] || fail "--output -: $(wc -l <data.csv) lines, expected 201"
grep -q "wrote 200 accelerations" msg.txt || fail "--output -: the message is not on stderr"
[ "$("$nearfield" "${forces[@]}" --output - 2>/dev/null | head -3 | wc -l)" -eq 3 ] || fail "'-' into head"
"$nearfield" generate --dist plummer --dim 3 --n 50 --output - --format bin 2>/dev/null | cmp -s - <(
  "$nearfield" generate --dist plummer --dim 3 --n 50 --output p.bin >/dev/null && cat p.bin) ||
  fail "generate --output - --format bin differs from the file"

# /dev/full: a named error and a non-zero exit, never "wrote"; the device stays a device.
if [ -c /dev/full ]; then
  "$nearfield" "${forces[@]}" --output /dev/full >out.txt 2>err.txt && fail "/dev/full: exit 0"
  grep -q "/dev/full" err.txt || fail "/dev/full: the error does not name it: $(cat err.txt)"
  grep -q "wrote" out.txt && fail "/dev/full: says it wrote"
  [ -c /dev/full ] || fail "/dev/full is no longer a device"
fi
"$nearfield" "${forces[@]}" --output /dev/null >/dev/null || fail "/dev/null"
[ -c /dev/null ] || fail "/dev/null is no longer a device"

# A FIFO with a reader: the reader gets the rows, the FIFO stays a FIFO.
mkfifo pipe
cat pipe >from-pipe.csv &
"$nearfield" "${forces[@]}" --output pipe >/dev/null || fail "FIFO: the write failed"
wait
[ -p pipe ] || fail "the FIFO was replaced"
cmp -s from-pipe.csv data.csv || fail "the FIFO's reader got other rows"

# A symbolic link: its target is replaced, the link stays.
mkdir keep && echo old >keep/real.csv && ln -s keep/real.csv link.csv
"$nearfield" "${forces[@]}" --output link.csv >/dev/null || fail "symlink: the write failed"
[ -L link.csv ] || fail "the symbolic link was replaced"
cmp -s keep/real.csv data.csv || fail "the link's target does not hold the rows"

# A signal in the middle of a large write (a few hundred MB of CSV): the process ends by that
# signal and no temporary file is left. Job control, so that a background job keeps SIGINT.
set -m
for sig in INT TERM; do
  "$nearfield" generate --dist uniform-fast --dim 3 --n 8000000 --output big.csv >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 1 600); do
    compgen -G "big.csv.tmp.*" >/dev/null && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  compgen -G "big.csv.tmp.*" >/dev/null || fail "SIG$sig: no temporary file appeared (the write finished first?)"
  kill -"$sig" "$pid"
  wait "$pid"
  status=$?
  [ "$status" -eq $((128 + $(kill -l "$sig"))) ] || fail "SIG$sig: exit status $status"
  compgen -G "big.csv*" >/dev/null && fail "SIG$sig left $(ls big.csv*)"
done
# A .bin input larger than the memory the process may take: a named error, not a bare
# "std::bad_alloc". 2^27 2D particles (3 GiB of arrays, a sparse file) under a 2 GB address-space
# limit (not under AddressSanitizer, which reserves more than that for itself).
if ! grep -q __asan_init "$nearfield"; then
  "$nearfield" generate --dist uniform --dim 2 --n 1 --output one.bin >/dev/null || fail "generate one.bin"
  n=$((1 << 27))
  printf "$(printf '\\x%02x' $((n & 255)) $((n >> 8 & 255)) $((n >> 16 & 255)) $((n >> 24 & 255)) 0 0 0 0)" |
    dd of=one.bin bs=1 seek=16 conv=notrunc status=none
  truncate -s $((40 + n * 3 * 8)) one.bin
  (ulimit -v 2000000; "$nearfield" forces --input one.bin --kernel cpu-serial --level 2 --output f.csv) >out.txt 2>err.txt &&
    fail "a .bin larger than memory: exit 0"
  grep -q "one.bin: 134217728 particles need 3 GiB of memory" err.txt || fail "a .bin larger than memory: $(cat err.txt)"
  [ -e f.csv ] && fail "a .bin larger than memory: f.csv written"
  rm -f one.bin
fi
echo "outputs: all cases pass"
