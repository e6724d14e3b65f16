# A killed run loses nothing and resumes to the same end: `passnet build`,
# `exec` and `export` are each killed with SIGKILL at KILLS (default 20)
# random points, seeded and printed (KILL_SEED, default 1), each point a
# delay drawn in (0, D) where D is the uninterrupted run's wall time.
# After every kill `passnet doctor --deep` must find the store consistent;
# then the same command is run again to its end, and the store (mdb_dump;
# for exec, every table but the measured profiles, whose keys must still
# match) and the exported folder must be byte-identical to those of an
# uninterrupted run.
. "$ROOT/tests/cli/lib.sh"
need_corpus
KILLS=${KILLS:-20}
KILL_SEED=${KILL_SEED:-1}
# The smallest graphs (by file size), as few as give an uninterrupted build
# of 0.4 s or more (below that the kills would land after the end on a fast
# machine): 4, 8, 12, 16, 24, 32, then all of them, then all with shape
# variants.  So 60 runs stay short on any corpus and any machine: the steps
# are small because every run after a kill costs about one D, and a step
# that doubles the models can multiply D by ten (the larger files hold far
# more subgraphs).
all_models=$(ls -Sr "$CORPUS"/models/*/model.onnx | xargs -n1 dirname)
echo "kill points: $KILLS per command, seed $KILL_SEED"
# the profiles table's values hold measured times: keep its keys only
dump_no_times() {
	mdb_dump -a "$1" | awk '/^database=/ { p = ($0 == "database=profiles"); n = 0 }
		p && /^ / { n++; if (n % 2 == 0) next } { print }' > "$2" || fail "mdb_dump $1"
}
now() { date +%s.%N; }
# delays K D: K delays in (0, D) seconds from KILL_SEED and the command name
delays() {
	awk -v k="$1" -v d="$2" -v s="$KILL_SEED" -v c="$3" 'BEGIN {
		n = 0; for (i = 1; i <= length(c); i++) n = n * 31 + index("abcdefghijklmnopqrstuvwxyz", substr(c, i, 1))
		srand(s * 1000 + n % 1000)
		for (i = 0; i < k; i++) printf "%.3f\n", 0.02 + rand() * (d > 0.05 ? d - 0.02 : 0.03) }'
}
# killed DELAY CMD...: runs CMD, SIGKILLs it after DELAY seconds (if it is
# still running); returns 0 if it was killed, 1 if it had finished
killed() {
	kd=$1
	shift
	# a process killed in its exit cannot be checked for leaks (under
	# make test-sanitize LeakSanitizer would report the kill itself), so
	# the killed runs alone go without; their reruns are checked
	( ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:detect_leaks=0" \
	  LSAN_OPTIONS="${LSAN_OPTIONS:-}:detect_leaks=0" "$@" ) >/dev/null 2>&1 &
	pid=$!
	sleep "$kd"
	# a process that has ended but is not yet waited for still takes the
	# signal: ask /proc whether it is a zombie first
	state=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null || echo Z)
	if [ "$state" != Z ] && kill -9 "$pid" 2>/dev/null; then
		wait "$pid" 2>/dev/null || true
		return 0
	fi
	wait "$pid" 2>/dev/null || true
	return 1
}
doctor_clean() {
	pn --db "$1" doctor --deep
	[ "$status" -eq 0 ] || fail "$2: doctor after a kill: $out"
}

# Each command execs passnet, so that run in a subshell, "( cmd ) &", the
# pid $! is passnet's own (a function run in the background is a subshell,
# and killing that would leave passnet running on).
build_cmd() { exec "$PASSNET" --db "$1" build --variants "$variants" $models; }
# every fusion subgraph of 2 ops or more (no --limit, no --budget: a rerun
# after a kill must end where one run ends), on the calibration stored
# before (a measured figure, copied into every store alike)
exec_cmd() { exec "$PASSNET" --db "$1" exec --strategy fusion --min-nodes 2 --warmup 0 --trials 1; }
export_cmd() { exec "$PASSNET" --db "$1" export --out "$2" --tasks 200; }

# --- build ------------------------------------------------------------------
for level in "4 0" "8 0" "12 0" "16 0" "24 0" "32 0" "all 0" "all 2" "all 9"; do
	set -- $level
	variants=$2
	if [ "$1" = all ]; then models=$all_models; else models=$(echo "$all_models" | head -n "$1"); fi
	rm -rf "$TEST_TMP/ref"
	t0=$(now)
	(build_cmd "$TEST_TMP/ref") >/dev/null 2>&1 || fail "uninterrupted build failed"
	d=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { print b - a }')
	awk -v d="$d" 'BEGIN { exit !(d >= 0.4) }' && break
done
echo "build: $(echo "$models" | wc -l) models, --variants $variants"
dump "$TEST_TMP/ref" "$TEST_TMP/ref.dump"
hit=0 i=0
for delay in $(delays "$KILLS" "$d" build); do
	i=$((i + 1))
	db="$TEST_TMP/b$i"
	if killed "$delay" build_cmd "$db"; then
		hit=$((hit + 1))
		if [ -s "$db/data.mdb" ]; then
			doctor_clean "$db" "build (kill $i at $delay s)"
		elif [ -d "$db" ]; then
			# killed between its mkdir and LMDB's first write: nothing
			# stored, and doctor must say that, not a bare ENOENT
			pn --db "$db" doctor --deep
			expect_contains "$out" "empty: nothing was ever committed" "doctor on a store killed before its first commit"
		fi
	fi
	(build_cmd "$db") >/dev/null 2>&1 || fail "build rerun after kill $i at $delay s failed"
	dump "$db" "$TEST_TMP/b$i.dump"
	cmp -s "$TEST_TMP/ref.dump" "$TEST_TMP/b$i.dump" ||
		fail "build killed at $delay s (kill $i, seed $KILL_SEED) then rerun gives another store"
	rm -rf "$db" "$TEST_TMP/b$i.dump"
done
echo "build: $hit of $KILLS runs killed before their end (D = $d s), each resumed to the same store"
[ "$hit" -ge 1 ] || fail "no build was killed before its end"

# --- exec -------------------------------------------------------------------
# its own store, of as few of the smallest models as give an exec of 0.4 s
# or more (a build's level could mean hours of profiling)
variants=0
for level in 1 2 3 4 6 8 10 12 14 16 20 24 all; do
	if [ "$level" = all ]; then models=$all_models; else models=$(echo "$all_models" | head -n "$level"); fi
	rm -rf "$TEST_TMP/built" "$TEST_TMP/eref"
	(build_cmd "$TEST_TMP/built") >/dev/null 2>&1 || fail "the build for exec failed"
	pn --db "$TEST_TMP/built" calibrate
	[ "$status" -eq 0 ] || fail "calibrate: $out"
	cp -r "$TEST_TMP/built" "$TEST_TMP/eref"
	t0=$(now)
	(exec_cmd "$TEST_TMP/eref") >/dev/null 2>&1 || fail "uninterrupted exec failed"
	d=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { print b - a }')
	awk -v d="$d" 'BEGIN { exit !(d >= 0.4) }' && break
done
echo "exec: $(echo "$models" | wc -l) models"
dump_no_times "$TEST_TMP/eref" "$TEST_TMP/ref.exec"
grep -q '^database=profiles' "$TEST_TMP/ref.exec" || fail "exec stored no profiles"
hit=0 i=0
for delay in $(delays "$KILLS" "$d" exec); do
	i=$((i + 1))
	db="$TEST_TMP/e$i"
	cp -r "$TEST_TMP/built" "$db"
	if killed "$delay" exec_cmd "$db"; then
		hit=$((hit + 1))
		doctor_clean "$db" "exec (kill $i at $delay s)"
	fi
	(exec_cmd "$db") >/dev/null 2>&1 || fail "exec rerun after kill $i at $delay s failed"
	dump_no_times "$db" "$TEST_TMP/e$i.exec"
	cmp -s "$TEST_TMP/ref.exec" "$TEST_TMP/e$i.exec" ||
		fail "exec killed at $delay s (kill $i, seed $KILL_SEED) then rerun gives another store (times aside)"
	rm -rf "$db" "$TEST_TMP/e$i.exec"
done
echo "exec: $hit of $KILLS runs killed before their end (D = $d s), each resumed to the same store"
[ "$hit" -ge 1 ] || fail "no exec was killed before its end"

# --- export -----------------------------------------------------------------
t0=$(now)
(export_cmd "$TEST_TMP/eref" "$TEST_TMP/set") >/dev/null 2>&1 || fail "uninterrupted export failed"
d=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { print b - a }')
[ -s "$TEST_TMP/set/MANIFEST.tsv" ] || fail "export wrote no MANIFEST.tsv"
hit=0 i=0
for delay in $(delays "$KILLS" "$d" export); do
	i=$((i + 1))
	out="$TEST_TMP/x$i"
	if killed "$delay" export_cmd "$TEST_TMP/eref" "$out"; then
		hit=$((hit + 1))
	fi
	# MANIFEST.tsv is written last: without it the export is unfinished
	if [ ! -e "$out/MANIFEST.tsv" ]; then
		(export_cmd "$TEST_TMP/eref" "$out") >/dev/null 2>&1 || fail "export rerun after kill $i at $delay s failed"
	fi
	diff -r "$TEST_TMP/set" "$out" >/dev/null ||
		fail "export killed at $delay s (kill $i, seed $KILL_SEED) then rerun writes another folder"
	rm -rf "$out"
done
doctor_clean "$TEST_TMP/eref" "export"
echo "export: $hit of $KILLS runs killed before their end (D = $d s), each rerun to the same folder"
[ "$hit" -ge 1 ] || fail "no export was killed before its end"
echo "kill_points: ok"
