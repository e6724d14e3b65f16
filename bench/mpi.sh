#!/bin/sh
# mpi.sh - `make bench-mpi`: passnet-mpi with R ranks against one passnet
# process, on the same machine, in one run (the machine is shared: compare
# the ratio, not the seconds).
#
#   bench/mpi.sh MODELS [RANKS] [SUBGRAPHS]
#
# build: `passnet build MODELS` (-j all cores) against `mpirun -n RANKS
# passnet-mpi build MODELS` (each rank -j 1), each on an empty store, each
# result checked equal (mdb_dump).  exec: the first SUBGRAPHS subgraphs of
# the plan (`exec --plan`, cheapest first) with the default protocol, on
# copies of the built store with calibration and ranges recorded first:
# `passnet exec --only LIST` against `passnet-mpi exec --only LIST` (rank 0
# hands out batches of 8; RANKS - 1 ranks profile).  Prints wall seconds
# and the ratios.
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
"$pn" -q --db "$tmp/one" build "$models" > /dev/null
one_build=$(since "$t")
t=$(now)
mpirun --oversubscribe -n "$ranks" "$mpi" --db "$tmp/mpi" -j 1 build "$models" > /dev/null 2>&1
mpi_build=$(since "$t")
mdb_dump -a "$tmp/one" > "$tmp/a"
mdb_dump -a "$tmp/mpi" > "$tmp/b"
cmp -s "$tmp/a" "$tmp/b" && same=identical || same=DIFFERENT
echo "build: 1 process $one_build s, $ranks ranks $mpi_build s (stores $same): ratio $(awk -v a="$one_build" -v b="$mpi_build" 'BEGIN { printf "%.2f", a / b }')"

"$pn" -q --db "$tmp/one" exec --only /dev/null > /dev/null
"$pn" --db "$tmp/one" exec --plan 2>/dev/null | head -n "$subgraphs" > "$tmp/list"
cp -r "$tmp/one" "$tmp/e1"
cp -r "$tmp/one" "$tmp/em"
t=$(now)
"$pn" -q --db "$tmp/e1" exec --only "$tmp/list" > /dev/null
one_exec=$(since "$t")
t=$(now)
mpirun --oversubscribe -n "$ranks" "$mpi" --db "$tmp/em" -j 1 --batch 8 exec --only "$tmp/list" > /dev/null 2>&1
mpi_exec=$(since "$t")
n=$(wc -l < "$tmp/list")
echo "exec: $n subgraphs: 1 process $one_exec s, $ranks ranks $mpi_exec s: ratio $(awk -v a="$one_exec" -v b="$mpi_exec" 'BEGIN { printf "%.2f", a / b }')"
