#!/bin/sh
# bench/extract.sh SOURCE... - ingest speed of `passnet extract` into a fresh
# store, with 1 and 2 threads: models/s and MB/s of model bytes decoded
# (median of 5 runs each).
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-8s %8s %10s %10s %10s\n' threads models seconds models/s MB/s
for t in 1 2; do
	for run in 1 2 3 4 5; do
		rm -rf "$tmp/db"
		bin/passnet --db "$tmp/db" -q --json -j "$t" extract "$@" > "$tmp/run$run.json"
	done
	# median by seconds
	for run in 1 2 3 4 5; do
		sed 's/.*"new":\([0-9]*\).*"duplicates":\([0-9]*\).*"bytes":\([0-9]*\).*"seconds":\([0-9.]*\).*/\4 \1 \2 \3/' "$tmp/run$run.json"
	done | sort -n | sed -n 3p | {
		read -r secs new dups bytes
		awk -v t="$t" -v s="$secs" -v n="$new" -v d="$dups" -v b="$bytes" 'BEGIN {
			printf "%-8d %8d %10.3f %10.0f %10.1f\n", t, n + d, s, (n + d) / s, b / s / 1e6 }'
	}
done
