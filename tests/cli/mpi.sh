#!/bin/sh
# mpi.sh - bin/passnet-mpi under OpenMPI's mpirun (4 ranks on loopback,
# oversubscribed) gives the store one process gives.
#
#  1. `mpirun -n 4 passnet-mpi build` equals `passnet build` of the same
#     sources (mdb_dump -a, every table), and leaves no rank store behind.
#  2. `mpirun -n 4 passnet-mpi exec` on a copy of that store (its ranges
#     phase shared by the 4 ranks, then batches of 3 handed out by rank 0)
#     equals one `passnet exec` with the same options, times aside (profiles
#     compared by key, every other table, ranges included, byte for byte).
#  3. A rank killed (SIGKILL) in the middle of an exec: the job fails, the
#     rerun of the same command profiles exactly what the ranks had not
#     committed, and ends in the same store as 2.
#  4. Usage errors.
. "$ROOT/tests/cli/lib.sh"
need_corpus

MPI_BIN=${PASSNET_MPI:-$ROOT/bin/passnet-mpi}
[ -x "$MPI_BIN" ] || fail "no $MPI_BIN (make mpi; make test builds it)"
command -v mpirun >/dev/null || fail "no mpirun (make deps installs openmpi-bin)"
# CI and containers run as root, which mpirun refuses unless told
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# loopback only, whatever interfaces the machine has
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
# the ranks' own passnet is this test's (under make test-sanitize: the
# sanitized build)
export PASSNET_BIN="$PASSNET"
mpi() { mpirun --oversubscribe -n 4 "$MPI_BIN" "$@"; }

dump_no_times() {
	mdb_dump -a "$1" | awk '/^database=/ { p = ($0 == "database=profiles"); n = 0 }
		p && /^ / { n++; if (n % 2 == 0) next } { print }' > "$2" || fail "mdb_dump $1"
}
same() {
	cmp -s "$1" "$2" || { diff "$1" "$2" | head -20 >&2; fail "$3"; }
}
profiles() { mdb_stat -s profiles "$1" 2>/dev/null | awk '/Entries/ { print $2 }'; }

src="$TEST_TMP/src"
mkdir -p "$src"
for d in $(du -s "$CORPUS"/models/* | sort -n | head -n 8 | awk '{print $2}'); do cp -r "$d" "$src/"; done
cp "$(ls -S -r "$CORPUS"/zoo/* | head -n 1)" "$TEST_TMP/"
set -- "$src" "$TEST_TMP"/*.tar* "$TEST_TMP"/*.zip
args="--variants 2 --strategy fusion,window,sole"

# --- 1. build ----------------------------------------------------------------------
pn --db "$TEST_TMP/one" build $args "$@"
[ "$status" -eq 0 ] || fail "one build: $out"
mpi --db "$TEST_TMP/m" build $args "$@" > "$TEST_TMP/mpi.log" 2>&1 ||
	{ tail -20 "$TEST_TMP/mpi.log" >&2; fail "mpirun passnet-mpi build"; }
grep -q "build over 4 ranks done" "$TEST_TMP/mpi.log" || fail "no summary: $(tail -3 "$TEST_TMP/mpi.log")"
dump "$TEST_TMP/one" "$TEST_TMP/one.dump"
dump "$TEST_TMP/m" "$TEST_TMP/m.dump"
same "$TEST_TMP/one.dump" "$TEST_TMP/m.dump" "4 MPI ranks built another store than one process"
[ ! -e "$TEST_TMP/m.mpi" ] || fail "the work folder was left: $(ls "$TEST_TMP/m.mpi")"
# a second MPI build of the same sources adds nothing
mpi --db "$TEST_TMP/m" build $args "$@" > "$TEST_TMP/mpi.log" 2>&1 || fail "second MPI build"
dump "$TEST_TMP/m" "$TEST_TMP/m.dump"
same "$TEST_TMP/one.dump" "$TEST_TMP/m.dump" "a second MPI build changed the store"
echo "build: 4 ranks give the one-process store"

# --- 2. exec ----------------------------------------------------------------------
# the calibration first, so that every copy measures on the same; the MPI
# store starts without ranges (its ranks share that phase), the one-process
# store records them alone
pn --db "$TEST_TMP/one" calibrate
[ "$status" -eq 0 ] || fail "calibrate: $out"
cp -r "$TEST_TMP/one" "$TEST_TMP/em"
pn --db "$TEST_TMP/one" exec --only /dev/null
[ "$status" -eq 0 ] || fail "exec (ranges): $out"
eargs="--strategy sole --limit 36 --warmup 0 --trials 1 --repeats 0"
cp -r "$TEST_TMP/one" "$TEST_TMP/e1"
pn --db "$TEST_TMP/e1" exec $eargs
[ "$status" -eq 0 ] || fail "one exec: $out"
[ "$(profiles "$TEST_TMP/e1")" -eq 36 ] || fail "one exec: $(profiles "$TEST_TMP/e1") profiles, not 36"
mpi --db "$TEST_TMP/em" --batch 3 exec $eargs > "$TEST_TMP/mpi.log" 2>&1 ||
	{ tail -20 "$TEST_TMP/mpi.log" >&2; fail "mpirun passnet-mpi exec"; }
grep -q "36 subgraphs to profile, in batches of 3 over 3 ranks" "$TEST_TMP/mpi.log" ||
	fail "exec plan line: $(grep passnet-mpi "$TEST_TMP/mpi.log")"
dump_no_times "$TEST_TMP/e1" "$TEST_TMP/e1.dump"
dump_no_times "$TEST_TMP/em" "$TEST_TMP/em.dump"
same "$TEST_TMP/e1.dump" "$TEST_TMP/em.dump" "4 MPI ranks profiled another store than one process"
echo "exec: the ranges over 4 ranks and 36 subgraphs in batches of 3 over 3 working ranks give the one-process ranges and profiles"

# --- 3. a rank killed mid-run ---------------------------------------------------------
# more work, so that the kill lands while batches are being profiled
# (a list, not --limit: a rerun's --limit would take the next ones)
"$PASSNET" --db "$TEST_TMP/one" exec --plan --strategy sole,window 2>/dev/null | head -n 150 > "$TEST_TMP/list" ||
	fail "exec --plan"
[ "$(wc -l < "$TEST_TMP/list")" -eq 150 ] || fail "exec --plan listed fewer than 150 subgraphs"
kargs="--only $TEST_TMP/list --warmup 1 --trials 3 --repeats 0"
cp -r "$TEST_TMP/one" "$TEST_TMP/k1"
pn --db "$TEST_TMP/k1" exec $kargs
[ "$status" -eq 0 ] || fail "one exec ($kargs): $out"
cp -r "$TEST_TMP/one" "$TEST_TMP/k"
mpi --db "$TEST_TMP/k" --batch 2 exec $kargs > "$TEST_TMP/kill.log" 2>&1 &
job=$!
# wait until some rank has committed profiles, then kill that rank
victim=""
for i in $(seq 1 600); do
	for r in 1 2 3; do
		n=$(profiles "$TEST_TMP/k.mpi/rank-$r" || true)
		if [ -n "$n" ] && [ "$n" -ge 2 ]; then victim=$r; break; fi
	done
	[ -n "$victim" ] && break
	kill -0 "$job" 2>/dev/null || break
	sleep 0.1
done
[ -n "$victim" ] || { wait "$job" || true; fail "no rank committed profiles before the job ended: $(tail -3 "$TEST_TMP/kill.log")"; }
# any rank will do: mpirun then ends the job, and every rank's passnet dies
# with its rank
pid=$(pgrep -f "passnet-mpi --db $TEST_TMP/k " | tail -n 1)
[ -n "$pid" ] || fail "no passnet-mpi rank process found"
kill -9 "$pid"
if wait "$job"; then fail "the MPI job ended well though a rank was killed"; fi
# the ranks' stores stay for the rerun, and no passnet of the job runs on
sleep 0.5
! pgrep -f "passnet --db $TEST_TMP/k.mpi/" >/dev/null || fail "a rank's passnet outlived its rank"
left=0
for s in "$TEST_TMP"/k.mpi/rank-*; do
	n=$(profiles "$s" || echo 0)
	left=$((left + ${n:-0}))
done
before=$(profiles "$TEST_TMP/k" || echo 0)
# what was committed stays: in the rank stores, or already merged into the
# store when the kill landed after rank 0 had merged (the job near its end;
# a loaded machine polls late)
[ $((left + ${before:-0})) -ge 2 ] ||
	fail "the killed run left $left profiles in the rank stores and ${before:-0} in the store"
mpi --db "$TEST_TMP/k" --batch 2 exec $kargs > "$TEST_TMP/rerun.log" 2>&1 ||
	{ tail -20 "$TEST_TMP/rerun.log" >&2; fail "the rerun after the kill failed"; }
want=$((150 - left - ${before:-0}))
grep -q "passnet-mpi: exec: $want subgraphs to profile" "$TEST_TMP/rerun.log" ||
	fail "the rerun should profile the $want not committed: $(grep 'to profile' "$TEST_TMP/rerun.log")"
dump_no_times "$TEST_TMP/k1" "$TEST_TMP/k1.dump"
dump_no_times "$TEST_TMP/k" "$TEST_TMP/k.dump"
same "$TEST_TMP/k1.dump" "$TEST_TMP/k.dump" "killed then rerun MPI exec differs from one exec"
echo "kill: a rank killed once rank $victim had committed profiles ($left in the rank stores then, ${before:-0} merged); the rerun profiled the other $want and ended in the one-process store"

# --- 4. usage ----------------------------------------------------------------------
set +e
mpirun -n 1 "$MPI_BIN" --db "$TEST_TMP/u" frobnicate > "$TEST_TMP/u.log" 2>&1
st=$?
set -e
[ "$st" -ne 0 ] || fail "an unknown stage was accepted"
grep -q "usage: mpirun -n N passnet-mpi" "$TEST_TMP/u.log" || fail "no usage line: $(cat "$TEST_TMP/u.log")"
echo "ok"
