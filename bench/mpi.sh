#!/bin/sh
# mpi.sh - `make bench-mpi`: passnet-mpi with R ranks against one passnet
# process, on the same machine, in one run (the machine is shared: compare
# the ratio, not the seconds).
#
#   [BUILD_ARGS=...] [EXEC=0] bench/mpi.sh MODELS [RANKS] [SUBGRAPHS]
#
# BUILD_ARGS go to every build (e.g. "--variants 0"); EXEC=0 stops after
# the build figures.
# build: `passnet build MODELS` (-j all cores) against `mpirun -n RANKS
# passnet-mpi build MODELS` (each rank -j 1), each on an empty store, each
# result checked equal (mdb_dump).  exec: the first SUBGRAPHS subgraphs of
# the plan (`exec --plan`, cheapest first) with the default protocol, on
# copies of the built store with calibration and ranges recorded first:
# `passnet exec --only LIST` against `passnet-mpi exec --only LIST` (rank 0
# hands out batches of 8; RANKS - 1 ranks profile).  Prints wall seconds
# and the ratios.  A 2-core machine cannot show what RANKS machines would
# do, so each stage also runs its RANKS shards one after the other (each
# alone on the machine, all cores: `--shard K/RANKS`) and merges them:
# the slowest shard plus the merge is what RANKS such machines would take
# (the projection printed; copying stores between machines aside).
set -eu
models=${1:?usage: bench/mpi.sh MODELS [RANKS] [SUBGRAPHS]}
ranks=${2:-4}
subgraphs=${3:-200}
root=$(cd "$(dirname "$0")/.." && pwd)
pn="$root/bin/passnet"
mpi="$root/bin/passnet-mpi"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pn-bench-mpi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

echo "bench-mpi: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $models; $ranks ranks"
t=$(now)
"$pn" -q --db "$tmp/one" build ${BUILD_ARGS:-} "$models" > /dev/null
one_build=$(since "$t")
t=$(now)
mpirun --oversubscribe -n "$ranks" "$mpi" --db "$tmp/mpi" -j 1 build ${BUILD_ARGS:-} "$models" > /dev/null 2>&1
mpi_build=$(since "$t")
mdb_dump -a "$tmp/one" > "$tmp/a"
mdb_dump -a "$tmp/mpi" > "$tmp/b"
cmp -s "$tmp/a" "$tmp/b" && same=identical || same=DIFFERENT
echo "build: 1 process $one_build s, $ranks ranks $mpi_build s (stores $same): ratio $(awk -v a="$one_build" -v b="$mpi_build" 'BEGIN { printf "%.2f", a / b }')"

# project: the slowest shard + the merge
project() {   # project STAGE ARGS...: prints "slowest merge"
	stage=$1
	shift
	slowest=0
	list=""
	for k in $(seq 0 $((ranks - 1))); do
		rm -rf "$tmp/p$k"
		[ "$stage" = exec ] && cp -r "$tmp/one" "$tmp/p$k"
		t=$(now)
		"$pn" -q --db "$tmp/p$k" "$stage" --shard "$k/$ranks" "$@" > /dev/null 2>&1
		d=$(since "$t")
		slowest=$(awk -v a="$slowest" -v b="$d" 'BEGIN { print (b > a ? b : a) }')
		list="$list $tmp/p$k"
	done
	rm -rf "$tmp/pm"
	[ "$stage" = exec ] && cp -r "$tmp/one" "$tmp/pm"
	t=$(now)
	"$pn" -q --db "$tmp/pm" merge $list > /dev/null 2>&1
	echo "$slowest $(since "$t")"
}
set -- $(project build ${BUILD_ARGS:-} "$models")
mdb_dump -a "$tmp/pm" > "$tmp/b"
cmp -s "$tmp/a" "$tmp/b" && same=identical || same=DIFFERENT
echo "build: projected on $ranks machines like this one: slowest shard $1 s + merge $2 s = $(awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a + b }') s (merged shards $same to one build): ratio $(awk -v o="$one_build" -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", o / (a + b) }')"
[ "${EXEC:-1}" = 0 ] && exit 0

"$pn" -q --db "$tmp/one" exec --only /dev/null > /dev/null
"$pn" --db "$tmp/one" exec --plan 2>/dev/null | head -n "$subgraphs" > "$tmp/list"
cp -r "$tmp/one" "$tmp/e1"
cp -r "$tmp/one" "$tmp/e1j1"
cp -r "$tmp/one" "$tmp/em"
n=$(wc -l < "$tmp/list")
t=$(now)
"$pn" -q --db "$tmp/e1" exec --only "$tmp/list" > /dev/null
one_exec=$(since "$t")
set -- $(project exec --only "$tmp/list")
echo "exec: $n subgraphs: 1 process $one_exec s; projected on $ranks machines like this one: slowest shard $1 s + merge $2 s = $(awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a + b }') s: ratio $(awk -v o="$one_exec" -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", o / (a + b) }')"
# on this machine the ranks share its cores, so each times on one thread,
# and so does the process they are compared with (the protocol times with
# N threads and with 1: the same -j gives the same measurements to make)
t=$(now)
"$pn" -q --db "$tmp/e1j1" -j 1 exec --only "$tmp/list" > /dev/null
one_exec=$(since "$t")
t=$(now)
mpirun --oversubscribe -n "$ranks" "$mpi" --db "$tmp/em" -j 1 --batch 8 exec --only "$tmp/list" > /dev/null 2>&1
mpi_exec=$(since "$t")
echo "exec: $n subgraphs at -j 1: 1 process $one_exec s, $ranks ranks ($((ranks - 1)) profiling) $mpi_exec s on this machine: ratio $(awk -v a="$one_exec" -v b="$mpi_exec" 'BEGIN { printf "%.2f", a / b }')"
