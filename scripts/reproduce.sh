#!/usr/bin/env bash
# The main job of the README: set-up (packages, configure, build), then a small demonstration:
# a uniform-exact input and its quadtree. (The full reproduction of the paper replaces this once
# `nearfield reproduce` exists.)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/setup.sh"
nf_setup
mkdir -p "$root/results/demo"
"$root/build/bin/nearfield" generate --dist uniform-exact --dim 2 --level 7 --ppb 8 --output "$root/results/demo/uniform-exact-l7-p8.csv"
"$root/build/bin/nearfield" tree --input "$root/results/demo/uniform-exact-l7-p8.csv" --level 7
