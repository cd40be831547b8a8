#!/usr/bin/env bash
# The report screenshots in docs/img/: each report kind (load, overlay, decay, dbt3 load,
# compare) from a short load (a couple of seconds) and a long one (about a minute), in a
# managed cluster of a scratch folder, each page opened in headless Chromium at 1400 px
# wide and checked by bench/report-screenshot.ts (charts drawn, no console error, no request).
#
#   npm run build && bash bench/report-gallery.sh [scratch-dir]      (SIZES=short: only the short loads)
#
# Prints each command with its wall time; the reports (.json, .html) stay in the scratch folder.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d -t pgsurge-gallery-XXXX)}
out="$repo/docs/img"
mkdir -p "$work" "$out"
cd "$work"
pg() { node "$repo/bin/pgsurge.js" "$@"; }
timed() {
  local start=$SECONDS
  echo "\$ pgsurge $*"
  pg "$@" >/dev/null
  echo "  ($((SECONDS - start)) s)"
}
# each PNG made smaller with pngquant when it is there (Debian: apt-get install pngquant): docs keep each under 300 KB
shot() {
  node "$repo/dist/bench/report-screenshot.js" "$1" --out "$out/$2.png" --width 1400 | grep -E '^(screenshot|OK|FAILED)|^  '
  if command -v pngquant >/dev/null; then pngquant --quality 70-90 --speed 1 --force --output "$out/$2.png" "$out/$2.png"; fi
  echo "  $2.png: $(($(stat -c %s "$out/$2.png") / 1024)) KB"
}

echo "scratch folder: $work; machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
pg cluster start >/dev/null
trap 'pg cluster stop >/dev/null' EXIT
for size in ${SIZES:-short long}; do
  if [ "$size" = short ]; then sf=0.2; decay=3M; else sf=1; decay=4M; fi
  # the previous round's dbt3 load left the tables with their keys (lineitem's foreign keys would refuse these rows)
  psql "$(pg cluster url)" -qc 'DROP TABLE IF EXISTS lineitem, orders, partsupp, part, customer, supplier, nation, region CASCADE' 2>/dev/null
  [ -f "dbt3-$size/lineitem.tbl" ] || timed dbt3 gen --scale "$sf" --out "dbt3-$size"
  # load, and the same file at -w 1: the overlay
  timed load "dbt3-$size/lineitem.tbl" --create --truncate -w 2 --label "lineitem SF $sf, -w 2" --report "load-$size.json" -q
  shot "load-$size.json" "report-load-$size"
  timed load "dbt3-$size/lineitem.tbl" --truncate -w 1 --label "lineitem SF $sf, -w 1" --report "load-$size-w1.json" -q
  timed report "load-$size.json" "load-$size-w1.json" -o "overlay-$size.html" --title "lineitem SF $sf: -w 2 against -w 1"
  shot "overlay-$size.html" "report-overlay-$size"
  # compare: copy at 1 and 2 workers, one run each (into fresh copies of lineitem)
  timed compare "dbt3-$size/lineitem.tbl" --variants copy:w1,copy:w2 --repeat 1 --report "compare-$size.json" -q
  shot "compare-$size.json" "report-compare-$size"
  # decay: narrow rows, random keys, unique index
  timed decay --rows "$decay" --report "decay-$size.json" -q
  shot "decay-$size.json" "report-decay-$size"
  # dbt3 load: the eight tables, their keys and indexes, ANALYZE
  timed dbt3 load "dbt3-$size" --replace -w 2 --report "dbt3-$size.json" -q
  shot "dbt3-$size.json" "report-dbt3-$size"
done
