# Profiles keep the machine that measured them.  A store profiled here
# names this host's calibration in every profile, and `stats` lists that
# machine with its profile count.  A copy of the store profiled on "another
# node" (PASSNET_HOSTNAME plays one) measures that node, makes it current,
# and its new profiles name it while the earlier ones keep the first
# machine; stats, show and the report list both, and every bound is the
# roofline of the profile's own machine.  The original store is untouched.
. "$ROOT/tests/cli/lib.sh"
need_corpus
unset PASSNET_HOSTNAME
db="$TEST_TMP/db"
copy="$TEST_TMP/copy"
pn --db "$db" build --variants 0 "$CORPUS/models/squeezenet1_1"
[ "$status" -eq 0 ] || fail "build: $out"
pn --db "$db" -j 1 exec --limit 5 --trials 1 --warmup 0
[ "$status" -eq 0 ] || fail "exec: $out"
expect_contains "$out" "no calibration in the store yet" "first exec measures"

# check_store DB WANT_MACHINES: every profile names a machine stats lists,
# the counts agree, and each bound is max(flops/peak, bytes/bandwidth) of
# the profile's machine (1 thread: -j 1 everywhere).  Prints "id host
# hash" per profile for the checks that follow.
check_store() {
	"$PASSNET" --db "$1" --json stats >"$TEST_TMP/stats.json" || fail "stats on $1"
	"$PASSNET" --db "$1" --json ls --subgraphs >"$TEST_TMP/ls.json" || fail "ls on $1"
	"$PY" - "$TEST_TMP/stats.json" "$TEST_TMP/ls.json" "$2" <<'EOF' || fail "machines of $1 do not add up"
import json, sys
stats = json.load(open(sys.argv[1]))
machines = {m["id"]: m for m in stats["machines"]}
assert len(machines) == int(sys.argv[3]), stats["machines"]
assert sum(m["current"] for m in machines.values()) == 1, stats["machines"]
for m in machines.values():
    assert len(m["id"]) == 16 and all(c in "0123456789abcdef" for c in m["id"]), m
    assert m["threads"] == 1 and m["peak_gflops"] > 0 and m["bandwidth_gbs"] > 0, m
    assert m["cpu_model"], m
counts = {}
for line in open(sys.argv[2]):
    s = json.loads(line)
    p = s.get("profile")
    if not p:
        continue
    assert p.get("machine") in machines, (s["hash"], p.get("machine"), list(machines))
    m = machines[p["machine"]]
    counts[m["id"]] = counts.get(m["id"], 0) + 1
    if "bound_fused_us" in p:
        want = max(p["flops"] / (m["peak_gflops"] * 1e9),
                   p["bytes_fused"] / (m["bandwidth_gbs"] * 1e9)) * 1e6
        assert abs(p["bound_fused_us"] - want) <= 1e-3 * want, (s["hash"], p, m, want)
    print(m["id"], m["host"], s["hash"])
assert stats["profiles_without_machine"] == 0 and stats["profiles_unknown_machine"] == 0, stats
for i, m in machines.items():
    assert m["profiles"] == counts.get(i, 0), (m, counts)
assert sum(counts.values()) == stats["profiled"], (counts, stats["profiled"])
EOF
}

here=$("$PY" -c 'import socket; print(socket.gethostname())')
first=$(check_store "$db" 1)
echo "$first"
[ "$(echo "$first" | wc -l)" -eq 5 ] || fail "5 profiles expected: $first"
a=$(echo "$first" | awk 'NR == 1 {print $1}')
[ "$(echo "$first" | awk '{print $1, $2}' | sort -u)" = "$a $here" ] ||
	fail "every profile should name this host's machine $a ($here): $first"
pn --db "$db" calibrate --show
expect_contains "$out" "machine  $a: $here" "calibrate --show names the current machine"

# The copy is "another node": its exec measures that node first.
cp -r "$db" "$copy"
export PASSNET_HOSTNAME=node-b
pn --db "$copy" -j 1 exec --limit 3 --trials 1 --warmup 0
[ "$status" -eq 0 ] || fail "exec on node-b: $out"
expect_contains "$out" "calibration is of $here, not this machine (node-b)" "the other node is noticed"
pn --db "$copy" -j 1 exec --limit 1 --trials 1 --warmup 0
[ "$status" -eq 0 ] || fail "second exec on node-b: $out"
case "$out" in *"measuring this machine"*) fail "node-b measured itself twice: $out" ;; esac
unset PASSNET_HOSTNAME

both=$(check_store "$copy" 2)
echo "$both"
[ "$(echo "$both" | wc -l)" -eq 9 ] || fail "9 profiles expected: $both"
b=$(echo "$both" | awk -v a="$a" '$1 != a {print $1; exit}')
[ -n "$b" ] || fail "no profile names a second machine: $both"
[ "$(echo "$both" | awk -v b="$b" '$1 == b {print $2}' | sort -u)" = node-b ] ||
	fail "the new machine $b should be node-b: $both"
# the first run's profiles keep machine a; the 4 new ones are node-b's
echo "$first" | while read -r id host hash; do
	echo "$both" | grep -qx "$a $here $hash" || fail "$hash lost its machine $a: $both"
done
[ "$(echo "$both" | grep -c "^$b node-b ")" -eq 4 ] || fail "4 profiles of node-b expected: $both"
pn --db "$copy" --json calibrate --show
expect_contains "$out" "\"machine\":\"$b\"" "node-b is the copy's current machine"

# show names each profile's machine
hash_a=$(echo "$first" | awk 'NR == 1 {print $3}')
hash_b=$(echo "$both" | awk -v b="$b" '$1 == b {print $3; exit}')
pn --db "$copy" show "$hash_a"
expect_contains "$out" "machine    $a $here" "show names the first machine"
pn --db "$copy" show "$hash_b"
expect_contains "$out" "machine    $b node-b" "show names node-b"

# the text of stats and the report list both machines
pn --db "$copy" stats
expect_contains "$out" "machines    2 calibrated" "stats text"
expect_contains "$out" "$b * node-b" "node-b current in stats"
expect_contains "$out" "$a   $here" "first machine in stats"
pn --db "$copy" report --out "$TEST_TMP/report"
[ "$status" -eq 0 ] || fail "report: $out"
page=$(cat "$TEST_TMP/report/index.html")
expect_contains "$page" 'id="machine-table"' "machines in the report"
expect_contains "$page" "<code>$a</code></td><td>$here</td>" "first machine in the report"
expect_contains "$page" "<code>$b</code> *</td><td>node-b</td>" "node-b in the report"

pn --db "$copy" doctor
[ "$status" -eq 0 ] || fail "doctor on the copy: $out"
# doctor: a machine record whose id is not the hash of its bytes (machine
# a's record put under another id with lmdb-utils) is a problem
bad="$TEST_TMP/bad"
cp -r "$copy" "$bad"
# (hex, not mdb_dump -p: mdb_load misreads some printable escapes of the
# measured doubles)
hexof() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }
mdb_dump -s meta "$bad" | awk -v k=" $(hexof "machine/$a")" 'p { print; exit } $0 == k { p = 1 }' >"$TEST_TMP/val"
[ -s "$TEST_TMP/val" ] || fail "mdb_dump shows no machine/$a"
{ printf 'VERSION=3\nformat=bytevalue\ntype=btree\nHEADER=END\n %s\n' "$(hexof machine/0000000000000000)"
  cat "$TEST_TMP/val"; printf 'DATA=END\n'; } | mdb_load -s meta "$bad" || fail "mdb_load"
pn --db "$bad" doctor
[ "$status" -eq 1 ] || fail "doctor should find the misnamed machine: $out"
expect_contains "$out" "meta machine/0000000000000000: its bytes hash to machine $a" "doctor names it"

# the original store still has one machine, its own
check_store "$db" 1 >/dev/null
echo "profiles keep their machine: $a ($here) and $b (node-b)"
