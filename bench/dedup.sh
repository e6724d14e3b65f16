#!/bin/sh
# bench/dedup.sh SOURCE... - speed of partition and dedup with 1 and 2
# threads over a store extracted from the sources (extraction not timed):
# candidates/s of partition, candidates/s and unique subgraphs/s of dedup,
# and dedup's CPU seconds (user + system), median of 3 runs by dedup's time.
# VARIANTS=N passes --variants N to extract (default: extract's default);
# STRATEGY=LIST passes --strategy LIST to partition (default: all).
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin/passnet --db "$tmp/base" -q extract ${VARIANTS:+--variants "$VARIANTS"} "$@" >/dev/null
field() { sed "s/.*\"$1\":\([0-9.]*\).*/\1/"; }
printf '%-8s %11s %10s %14s %10s %15s %14s %10s\n' threads candidates partition_s partition_c/s dedup_s dedup_cand/s unique/s dedup_cpu
for t in 1 2; do
	for run in 1 2 3; do
		rm -rf "$tmp/db"
		cp -r "$tmp/base" "$tmp/db"
		bin/passnet --db "$tmp/db" -q --json -j "$t" partition ${STRATEGY:+--strategy "$STRATEGY"} > "$tmp/p$run"
		/usr/bin/time -f '%U %S' -o "$tmp/t$run" bin/passnet --db "$tmp/db" -q --json -j "$t" dedup > "$tmp/d$run"
		echo "$(field seconds < "$tmp/p$run") $(field candidates < "$tmp/p$run") $(field seconds < "$tmp/d$run") $(field new_subgraphs < "$tmp/d$run") $(awk '{ print $1 + $2 }' "$tmp/t$run")"
	done | sort -k3 -n | sed -n 2p | {
		read -r ps cand ds uniq cpu
		awk -v t="$t" -v ps="$ps" -v c="$cand" -v ds="$ds" -v u="$uniq" -v cpu="$cpu" 'BEGIN {
			printf "%-8d %11d %10.3f %14.0f %10.3f %15.0f %14.0f %10.2f\n", t, c, ps, c / ps, ds, c / ds, u / ds, cpu }'
	}
done
