#!/bin/sh
# bench/dedup.sh SOURCE... - speed of partition and dedup with 1 and 2
# threads over a store extracted from the sources (extraction not timed):
# candidates/s of partition, candidates/s and unique subgraphs/s of dedup
# (median of 3 runs each).
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin/passnet --db "$tmp/base" -q extract "$@" >/dev/null
field() { sed "s/.*\"$1\":\([0-9.]*\).*/\1/"; }
printf '%-8s %11s %10s %14s %10s %15s %14s\n' threads candidates partition_s partition_c/s dedup_s dedup_cand/s unique/s
for t in 1 2; do
	for run in 1 2 3; do
		rm -rf "$tmp/db"
		cp -r "$tmp/base" "$tmp/db"
		bin/passnet --db "$tmp/db" -q --json -j "$t" partition > "$tmp/p$run"
		bin/passnet --db "$tmp/db" -q --json -j "$t" dedup > "$tmp/d$run"
		echo "$(field seconds < "$tmp/p$run") $(field candidates < "$tmp/p$run") $(field seconds < "$tmp/d$run") $(field new_subgraphs < "$tmp/d$run")"
	done | sort -k3 -n | sed -n 2p | {
		read -r ps cand ds uniq
		awk -v t="$t" -v ps="$ps" -v c="$cand" -v ds="$ds" -v u="$uniq" 'BEGIN {
			printf "%-8d %11d %10.3f %14.0f %10.3f %15.0f %14.0f\n", t, c, ps, c / ps, ds, c / ds, u / ds }'
	}
done
