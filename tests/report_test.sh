#!/usr/bin/env bash
# The report generator runs on the committed results and writes every section and figure.
set -euo pipefail
src="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
python=""
for p in python3 /usr/bin/python3; do
  if "$p" -c 'import matplotlib' >/dev/null 2>&1; then python="$p"; break; fi
done
[ -n "$python" ] || { echo "no python3 with matplotlib (Debian package python3-matplotlib)"; exit 1; }
mkdir -p "$tmp/paper"
cp -r "$src/paper/reference" "$tmp/paper/"
"$python" "$src/paper/make_report.py" --results "$src/results" --paper "$tmp/paper"
for section in "## 3. Table III" "## 4. The GPU tree build" "## 5. Tables I and II" "## 6. Tree depth" \
               "## 7. Particles per box" "## 8. Validation" "## 9. What reproduces"; do
  grep -qF "$section" "$tmp/paper/README.md" || { echo "missing section: $section"; exit 1; }
done
grep -q "(no " "$tmp/paper/README.md" && { echo "a section has no results"; grep "(no " "$tmp/paper/README.md"; exit 1; }
ls "$tmp/paper/figures/fig8.png" "$tmp/paper/figures"/depth-*.png "$tmp/paper/figures"/ppb-*.png > /dev/null
echo "report OK"
