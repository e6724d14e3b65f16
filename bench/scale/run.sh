#!/bin/sh
# bench/scale/run.sh SEED_PATH... - `make bench-scale`: the scale benchmark
# on a generated hub-like corpus (bench/scale/README.md).
#
# Environment: N (models, default 1000), SEED (default 1), STAGES=1 (extract,
# partition and dedup as three processes instead of one `build`), VARIANTS=V
# (build with --variants V instead of the default; rows are named
# build-vV), VARIANTS0=1 (also build with --variants 0 into a second store),
# EXEC=0 (skip exec and export), KEEP=1 (keep the stores in build/scale/),
# NO_WEIGHT_CHECK=1 (build with --no-weight-check; rows are named ...-nwc).
#
# The corpus is generated once per (N, SEED, generator source, seed paths)
# into build/scale/n<N>-s<SEED>/.  Every stage runs as its own cold process
# under /usr/bin/time -v (wall time, CPU time, peak RSS of that process);
# the store size is `du` after the stage; rates are per wall second (the
# machine may be shared: cpu_s is user + system time of the process).  One table row per stage, also
# appended as tab-separated lines to build/scale/results-s<SEED>.tsv (for
# bench/scale/series.sh).
set -eu
cd "$(dirname "$0")/../.."
N=${N:-1000}
SEED=${SEED:-1}
PN=${PASSNET:-bin/passnet}
GEN=${GEN:-build/bench/scale-gen}
THREADS=${THREADS:-2}
corpus=build/scale/n$N-s$SEED
stamp="$(sha256sum < bench/scale/gen.c | cut -c1-16) $*"

if [ "$(cat "$corpus/.done" 2>/dev/null)" != "$stamp" ]; then
	rm -rf "$corpus" "$corpus.tmp"
	mkdir -p build/scale
	start=$(date +%s.%N)
	"$GEN" -n "$N" -s "$SEED" -o "$corpus.tmp" "$@"
	mv "$corpus.tmp" "$corpus"
	echo "$stamp" > "$corpus/.done"
	awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "generated in %.1f s\n", e - s }'
fi
echo "corpus: $corpus, $(ls "$corpus"/*.tar.gz | wc -l) archives, $(du -sh "$corpus" | cut -f1)"

main=build main_args=
if [ -n "${VARIANTS:-}" ]; then
	main=build-v$VARIANTS main_args="--variants $VARIANTS"
fi
if [ "${NO_WEIGHT_CHECK:-0}" = 1 ]; then
	main=$main-nwc main_args="$main_args --no-weight-check"
fi
db=build/scale/store-n$N-s$SEED${VARIANTS:+-v$VARIANTS}
log=build/scale/log-n$N-s$SEED${VARIANTS:+-v$VARIANTS}
rm -rf "$db" "$db-v0" "$log"
mkdir -p "$log"
results=build/scale/results-s$SEED.tsv

field() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p" | head -n 1; }
# time_field FILE LABEL: a line of /usr/bin/time -v's report
time_field() { sed -n "s/^[[:space:]]*$2: //p" "$1"; }
seconds_of() { echo "$1" | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }'; }

# run NAME STORE ARGS...: one stage as a cold process; leaves $log/NAME.{out,err,time}.
# (sh has no local variables: run and build_rows use names of their own)
# Peak RSS counts the store pages LMDB maps in, which the kernel may take back
# at any time (clean page cache); the process's own memory is its anonymous
# part, sampled every half second into $log/NAME.anon (peak, in kB).
run() {
	run_name=$1 run_store=$2
	shift 2
	/usr/bin/time -v -o "$log/$run_name.time" "$PN" --db "$run_store" --json -q -j "$THREADS" "$@" \
		> "$log/$run_name.out" 2> "$log/$run_name.err" &
	run_pid=$!
	run_anon=0
	while kill -0 "$run_pid" 2>/dev/null; do
		for p in $(pgrep -P "$run_pid"); do
			a=$(sed -n 's/^RssAnon:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$p/status" 2>/dev/null)
			[ -z "$a" ] || [ "$a" -le "$run_anon" ] || run_anon=$a
		done
		sleep 0.5
	done
	echo "$run_anon" > "$log/$run_name.anon"
	wait "$run_pid" || {
		echo "$run_name failed (exit $?): $(tail -n 3 "$log/$run_name.err")" >&2
		return 1
	}
}

printf '%-18s %7s %8s %10s %9s %8s %8s %9s %12s %9s %9s %9s\n' \
	stage models variants candidates unique wall_s cpu_s models/s candidates/s rss_MB anon_MB store_MB
# row NAME STORE MODELS VARIANTS CANDIDATES UNIQUE: prints and records it.
row() {
	t=$log/$1.time
	wall=$(seconds_of "$(time_field "$t" 'Elapsed (wall clock) time (h:mm:ss or m:ss)')")
	cpu=$(awk -v u="$(time_field "$t" 'User time (seconds)')" -v s="$(time_field "$t" 'System time (seconds)')" 'BEGIN { print u + s }')
	rss=$(time_field "$t" 'Maximum resident set size (kbytes)')
	size=$(du -sk "$2" | cut -f1)
	anon=$(cat "$log/$1.anon" 2>/dev/null || echo 0)
	awk -v n="$1" -v m="$3" -v v="$4" -v c="$5" -v u="$6" -v w="$wall" -v p="$cpu" -v r="$rss" -v a="$anon" -v z="$size" 'BEGIN {
		printf "%-18s %7s %8s %10s %9s %8.1f %8.1f %9.1f %12.0f %9.0f %9.0f %9.0f\n", n, m, v, c, u, w, p,
			(m + v) / w, c / w, r / 1024, a / 1024, z / 1024 }'
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$N" "$1" "$3" "$4" "$5" "$6" "$wall" "$cpu" \
		"$rss" "$size" "$(date -u +%F)" >> "$results"
}

# The stage lines of build's JSON output.
line_of() { grep "\"stage\":\"$2\"" "$1" || true; }

build_rows() {  # NAME STORE [build args]
	name=$1 store=$2
	shift 2
	if [ "${STAGES:-0}" = 1 ]; then
		run "$name.extract" "$store" extract "$@" "$corpus"
		o=$log/$name.extract.out
		row "$name.extract" "$store" "$(field new < "$o")" "$(field variants < "$o")" 0 0
		run "$name.partition" "$store" partition
		o=$log/$name.partition.out
		row "$name.partition" "$store" "$(field models < "$o")" "$(field variants < "$o")" "$(field candidates < "$o")" 0
		run "$name.dedup" "$store" dedup
		o=$log/$name.dedup.out
		row "$name.dedup" "$store" "$(field models < "$o")" "$(field variants < "$o")" "$(field candidates < "$o")" "$(field new_subgraphs < "$o")"
	else
		run "$name" "$store" build "$@" "$corpus"
		o=$log/$name.out
		ex=$(grep '"files"' "$o" || true)
		dd=$(line_of "$o" dedup)
		row "$name" "$store" "$(echo "$ex" | field new)" "$(echo "$ex" | field variants)" \
			"$(echo "$dd" | field candidates)" "$(echo "$dd" | field new_subgraphs)"
		for st in extract partition dedup; do
			case $st in
			extract) s=$(echo "$ex" | field seconds) ;;
			*) s=$(line_of "$o" "$st" | field seconds) ;;
			esac
			printf '  %-12s %s s (passnet'"'"'s own timing)\n' "$st" "$s"
		done
	fi
}

# shellcheck disable=SC2086 # main_args is empty or a few words
build_rows "$main" "$db" $main_args
if [ "${VARIANTS0:-0}" = 1 ]; then
	build_rows build-v0 "$db-v0" --variants 0
fi
if [ "${EXEC:-1}" = 1 ]; then
	run exec "$db" exec --budget 60 --warmup 1 --trials 3
	o=$log/exec.out
	row exec "$db" "$(field ranges_models < "$o")" 0 0 "$(field profiled < "$o")"
	echo "  exec: $(field profiled < "$o") profiled of $(field todo < "$o") in $(field seconds < "$o") s, ranges $(field ranges_seconds < "$o") s ($(field ranges_models < "$o") models); $(awk -v p="$(field profiled < "$o")" -v s="$(field seconds < "$o")" 'BEGIN { printf "%.1f", p / s }') subgraphs/s"
	rm -rf "$log/tasks"
	run export "$db" export --out "$log/tasks" --tasks 200
	# export prints no JSON: its tasks from the summary line ("unique" column)
	row export "$db" 0 0 0 "$(sed -n 's/^export: \([0-9]*\) tasks.*/\1/p' "$log/export.out" | head -n 1)"
fi
[ "${KEEP:-0}" = 1 ] || rm -rf "$db" "$db-v0"
echo "logs: $log (stage outputs and /usr/bin/time -v reports)"
