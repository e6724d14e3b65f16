#!/bin/sh
# bench/peer.sh PATH... - passnet against the Python peer (bench/peer.py) on
# the same models, the same work (single ops and windows of 2..8 nodes, one
# store each), each a cold process into a fresh store: wall and CPU seconds
# (user + system) of each, and the peer/passnet ratios.  passnet runs
# `build --strategy sole,window --variants 0` on THREADS threads (default 2),
# twice: with `--no-weight-check`, the peer's work (the peer runs no model),
# and as a user's build runs, with extract's weight check (one run of each
# model: extract/weight_scale.h), which the peer has no counterpart for.
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
threads=${THREADS:-2}
timed() {   # timed NAME CMD...: "wall cpu" into $tmp/NAME.time
	name=$1
	shift
	/usr/bin/time -f '%e %U %S' -o "$tmp/$name.raw" "$@" > "$tmp/$name.out"
	awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$tmp/$name.raw" > "$tmp/$name.time"
}
timed peer /usr/bin/python3 bench/peer.py "$tmp/peer" "$@"
cut="build --strategy sole,window --variants 0"
timed passnet bin/passnet --db "$tmp/passnet" -q --json -j "$threads" $cut --no-weight-check "$@"
timed checked bin/passnet --db "$tmp/checked" -q --json -j "$threads" $cut "$@"
cat "$tmp/peer.out"
read -r pw pc < "$tmp/peer.time"
printf '%-40s %8s %8s\n' run wall_s cpu_s
printf '%-40s %8.2f %8.2f\n' "peer (python, 1 thread)" "$pw" "$pc"
for run in passnet checked; do
	read -r nw nc < "$tmp/$run.time"
	label="passnet -j $threads, the peer's work"
	[ "$run" = checked ] && label="passnet -j $threads, with the weight check"
	printf '%-40s %8.2f %8.2f   ratio peer/passnet: wall %.2fx, cpu %.2fx\n' "$label" "$nw" "$nc" \
		"$(echo "$pw $nw" | awk '{ print $1 / $2 }')" "$(echo "$pc $nc" | awk '{ print $1 / $2 }')"
done
echo "target: wall >= 10x on the peer's work"
