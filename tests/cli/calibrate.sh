# passnet calibrate measures peak FLOP/s, bandwidth and the per-node
# overhead, keeps them in the store's meta table, and a second process
# (`calibrate --show`, read-only) reads back exactly what was measured.  A
# new calibration replaces the old one as current; both stay machines.  Timings are only checked to be
# positive and finite: the machine is shared.
. "$ROOT/tests/cli/lib.sh"
PY=${PYTHON:-/usr/bin/python3}
db="$TEST_TMP/db"
unset PASSNET_HOSTNAME

pn calibrate --help
[ "$status" -eq 0 ] || fail "--help exited $status"
expect_contains "$out" "--show" "usage"
pn calibrate --bogus
[ "$status" -eq 2 ] || fail "a bad option exits 2, got $status: $out"
pn --db "$db" calibrate --show
[ "$status" -eq 1 ] || fail "--show without a store exits 1, got $status: $out"
expect_contains "$out" "no store at $db" "missing store"
# a directory a run made but never committed to (killed in between): each
# reader says it is empty, not a bare "No such file"
mkdir -p "$TEST_TMP/uncommitted"
: > "$TEST_TMP/uncommitted/lock.mdb"
for cmd in "calibrate --show" "doctor" "stats"; do
	pn --db "$TEST_TMP/uncommitted" $cmd
	[ "$status" -eq 1 ] || fail "$cmd on an uncommitted store exits 1, got $status: $out"
	expect_contains "$out" "empty: nothing was ever committed" "$cmd on an uncommitted store"
done
: > "$TEST_TMP/uncommitted/data.mdb"
pn --db "$TEST_TMP/uncommitted" doctor
expect_contains "$out" "empty: nothing was ever committed" "doctor on an empty data.mdb"

# check_json JSON THREADS: one object, THREADS rows, every figure > 0 and
# finite, naming its machine (a 16-hex-digit id, this host, a CPU model).
check_json() {
	printf '%s\n' "$1" | "$PY" -c '
import json, math, socket, sys
c = json.loads(sys.stdin.read())
t = int(sys.argv[1])
assert c["threads"] == t, c
assert len(c["machine"]) == 16 and all(ch in "0123456789abcdef" for ch in c["machine"]), c
assert c["host"] == socket.gethostname() and c["cpu_model"], c
for k in ("peak_gflops", "bandwidth_gbs"):
    assert len(c[k]) == t, (k, c)
    assert all(isinstance(v, (int, float)) and v > 0 and math.isfinite(v) for v in c[k]), (k, c)
v = c["node_overhead_us"]
assert isinstance(v, (int, float)) and v > 0 and math.isfinite(v), c
' "$2" || fail "implausible calibration (want $2 thread rows): $1"
}

pn --db "$db" -j 2 --json calibrate
[ "$status" -eq 0 ] || fail "calibrate exited $status: $out"
measured=$out
echo "$measured"
check_json "$measured" 2

pn --db "$db" --json calibrate --show
[ "$status" -eq 0 ] || fail "calibrate --show exited $status: $out"
expect_eq "$out" "$measured" "stored calibration read back"

pn --db "$db" calibrate --show
[ "$status" -eq 0 ] || fail "calibrate --show exited $status: $out"
expect_contains "$out" "threads  peak GFLOP/s  bandwidth GB/s" "table header"
expect_contains "$out" "node overhead" "overhead line"
[ "$(printf '%s\n' "$out" | grep -c '^ *[12]  ')" -eq 2 ] || fail "two thread rows expected: $out"

# Text output of a measurement, with one thread: it replaces the record.
pn --db "$db" -j 1 calibrate
[ "$status" -eq 0 ] || fail "calibrate -j 1 exited $status: $out"
echo "$out"
expect_contains "$out" "stored in $db" "where it went"
pn --db "$db" --json calibrate --show
check_json "$out" 1
current=$(printf '%s\n' "$out" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["machine"])')
# the replaced calibration stays a machine of the store; the new one is current
pn --db "$db" --json stats
[ "$status" -eq 0 ] || fail "stats exited $status: $out"
printf '%s\n' "$out" | "$PY" -c '
import json, sys
m = json.load(sys.stdin)["machines"]
assert len(m) == 2, m
assert [x["id"] for x in m if x["current"]] == [sys.argv[1]], m
assert sorted(x["threads"] for x in m) == [1, 2], m
' "$current" || fail "two machines expected, $current current: $out"
echo "calibration stored, read back and replaced; both kept as machines"
