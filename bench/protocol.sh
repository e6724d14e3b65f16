#!/bin/sh
# bench/protocol.sh CORPUS - the adaptive timing protocol against the full
# one (exec/protocol.h) on the same sample of subgraphs of one store: the
# sample profiled with the full protocol, then the adaptive one, then the
# full one again (so drift on a shared machine falls on both sides), each
# in a copy of one store that already holds the calibration and the ranges.
# Prints runs per subgraph, exec's subgraphs/s and CPU seconds of each run,
# how often the flags of two runs agree (full against full: the noise
# floor; full against adaptive: what the new protocol changes) and how
# close their medians are (bench/protocol_agree.py).
# N=2000: subgraphs in the sample (every k-th hash of the store, so every
# strategy and size is in it); STRATEGY=LIST: only subgraphs of these
# strategies (default all); KEEP=DIR keeps the stores there.
set -eu
cd "$(dirname "$0")/.."
corpus=${1:?usage: bench/protocol.sh CORPUS}
N=${N:-2000}
tmp=${KEEP:-$(mktemp -d)}
[ -n "${KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"
pn() { bin/passnet -q "$@"; }

pn --db "$tmp/base" build --no-weight-check "$corpus/models" >/dev/null
pn --db "$tmp/base" calibrate >/dev/null
pn --db "$tmp/base" exec --ranges-only >/dev/null
pn --db "$tmp/base" --json ls --subgraphs ${STRATEGY:+--strategy "$STRATEGY"} |
	sed 's/^{"hash":"\([0-9a-f]*\)".*/\1/' | sort > "$tmp/all"
total=$(wc -l < "$tmp/all")
awk -v n="$N" -v t="$total" 'int(NR * n / t) > int((NR - 1) * n / t)' "$tmp/all" > "$tmp/sample"
echo "store: $total subgraphs from $corpus; sample: $(wc -l < "$tmp/sample") subgraphs; $(nproc) cores"

run() {   # run NAME PROTOCOL
	rm -rf "$tmp/$1"
	cp -r "$tmp/base" "$tmp/$1"
	/usr/bin/time -f '%e %U %S' -o "$tmp/$1.time" \
		bin/passnet -q --db "$tmp/$1" --json exec --protocol "$2" --only "$tmp/sample" > "$tmp/$1.exec"
	pn --db "$tmp/$1" --json ls --subgraphs > "$tmp/$1.json"
}
run full_a full
run adaptive adaptive
run full_b full
printf '%-10s %9s %9s %9s %13s\n' run profiled wall_s cpu_s subgraphs/s
for r in full_a adaptive full_b; do
	profiled=$(sed 's/.*"profiled":\([0-9]*\).*/\1/' "$tmp/$r.exec")
	awk -v r="$r" -v p="$profiled" '{ printf "%-10s %9d %9.1f %9.1f %13.2f\n", r, p, $1, $2 + $3, p / $1 }' "$tmp/$r.time"
done
/usr/bin/python3 bench/protocol_agree.py "$tmp/sample" "$tmp/full_a.json" "$tmp/full_b.json" "$tmp/adaptive.json"
