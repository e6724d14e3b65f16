#!/bin/sh
# bench/peer.sh PATH... - passnet against the Python peer (bench/peer.py) on
# the same models, the same work (single ops and windows of 2..8 nodes, one
# store each), each a cold process into a fresh store: wall and CPU seconds
# (user + system) of each, and the peer/passnet ratios.  passnet runs
# `build --strategy sole,window --variants 0` on THREADS threads (default 2).
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
timed passnet bin/passnet --db "$tmp/passnet" -q --json -j "$threads" build --strategy sole,window --variants 0 "$@"
cat "$tmp/peer.out"
read -r pw pc < "$tmp/peer.time"
read -r nw nc < "$tmp/passnet.time"
printf '%-26s %8s %8s\n' run wall_s cpu_s
printf '%-26s %8.2f %8.2f\n' "peer (python, 1 thread)" "$pw" "$pc"
printf '%-26s %8.2f %8.2f\n' "passnet (-j $threads)" "$nw" "$nc"
awk -v pw="$pw" -v pc="$pc" -v nw="$nw" -v nc="$nc" 'BEGIN {
	printf "ratio peer/passnet: wall %.2fx, cpu %.2fx (target: wall >= 10x)\n", pw / nw, pc / nc }'
