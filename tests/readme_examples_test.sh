#!/usr/bin/env bash
# The README's command examples, run as a new user would: in order, in an empty folder standing for
# the repository root (build/bin and experiments/ linked in), every line of its ```sh blocks that
# calls build/bin/nearfield or nearfield-mpi (under mpirun, when both are there), except those whose
# comment says "# GPU" or "# minutes". Each must exit 0; each one's time is printed.
# Usage: readme_examples_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail
src="$1"
bin="$(cd "$2" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/build"
ln -s "$bin" "$tmp/build/bin"
ln -s "$src/experiments" "$tmp/experiments"
with_mpi=0
if [ -x "$bin/nearfield-mpi" ] && command -v mpirun > /dev/null; then with_mpi=1; fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

# The commands, one per line (continuation lines joined), in README order.
python3 - "$src/README.md" "$with_mpi" > "$tmp/commands" <<'PY'
import re, sys
text, with_mpi = open(sys.argv[1]).read(), sys.argv[2] == "1"
for block in re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M):
    for command in re.sub(r"\\\n\s*", "", block).splitlines():
        comment = command.split("#", 1)[1] if "#" in command else ""
        if re.search(r"\b(GPU|minutes)\b", comment):
            continue
        if command.startswith("build/bin/nearfield ") or (with_mpi and re.match(r"(\w+=\S+ )*mpirun .*nearfield-mpi", command)):
            print(command)
PY
[ -s "$tmp/commands" ] || { echo "FAIL: no examples found in README.md"; exit 1; }
count=0
total_start=$(date +%s%N)
while IFS= read -r command; do
  start=$(date +%s%N)
  if ! (cd "$tmp" && timeout 300 bash -c "$command" > "$tmp/out" 2>&1 < /dev/null); then
    cat "$tmp/out"
    echo "FAIL: README example exits non-zero: $command"
    exit 1
  fi
  ms=$((($(date +%s%N) - start) / 1000000))
  printf '%4d.%d s  %s\n' $((ms / 1000)) $((ms % 1000 / 100)) "$command"
  count=$((count + 1))
done < "$tmp/commands"
echo "README examples OK: $count commands in $((($(date +%s%N) - total_start) / 1000000000)) s"
