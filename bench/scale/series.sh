#!/bin/sh
# bench/scale/series.sh SEED N... - how each figure of bench/scale/run.sh
# grows with N: for every stage, the figure at each N (latest run recorded in
# build/scale/results-s<SEED>.tsv) and its ratio to the previous N.
set -eu
cd "$(dirname "$0")/../.."
seed=$1
shift
results=build/scale/results-s$seed.tsv
[ -f "$results" ] || { echo "no results in $results: run make bench-scale first" >&2; exit 1; }
awk -v list="$*" -F'\t' '
BEGIN { n = split(list, ns, " ") }
{ key = $1 SUBSEP $2; models[key] = $3 + $4; cand[key] = $5; uniq[key] = $6; wall[key] = $7
  cpu[key] = $8; rss[key] = $9; size[key] = $10; if (!(($2) in seen)) { seen[$2] = 1; stages[++ns_] = $2 } }
END {
	printf "%-20s %-18s", "stage", "figure"
	for (i = 1; i <= n; i++) printf " %12s", "N=" ns[i]
	for (i = 2; i <= n; i++) printf " %9s", "x" ns[i] / ns[i - 1]
	printf "\n"
	split("models(+variants) candidates unique wall_s cpu_s rss_MB store_MB", fig, " ")
	for (s = 1; s <= ns_; s++) for (f = 1; f <= 7; f++) {
		st = stages[s]; have = 0
		for (i = 1; i <= n; i++) { k = ns[i] SUBSEP st
			v[i] = f == 1 ? models[k] : f == 2 ? cand[k] : f == 3 ? uniq[k] : f == 4 ? wall[k] : \
			       f == 5 ? cpu[k] : f == 6 ? rss[k] / 1024 : size[k] / 1024
			got[i] = k in wall; if (got[i]) have = 1 }
		if (!have) continue
		printf "%-20s %-18s", st, fig[f]
		for (i = 1; i <= n; i++) printf " %12s", (got[i] ? sprintf("%.1f", v[i]) : "-")
		for (i = 2; i <= n; i++) printf " %9s", (got[i] && got[i - 1] && v[i - 1] > 0 ? sprintf("%.2f", v[i] / v[i - 1]) : "-")
		printf "\n"
	}
}' "$results"
