#!/usr/bin/env bash
# The main job of the README: set-up (packages, configure, build), then `nearfield reproduce`:
# the paper's experiments (experiments/*.ini) at full scale with a CUDA GPU, or the CPU kernels at
# a reduced scale without one, results into results/, and the report paper/README.md regenerated.
# Extra arguments go to `nearfield reproduce` (e.g. --only table3, --reduced).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/setup.sh"
nf_setup
cd "$root"
exec build/bin/nearfield reproduce "$@"
