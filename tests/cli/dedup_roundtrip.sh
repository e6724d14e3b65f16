# A subgraph's canonical bytes are the subgraph: decoding them gives a graph
# that hashes back to the same key, for every subgraph of the corpus
# and the ONNX backend tests (`passnet doctor --deep` checks it, with every
# other invariant of the store).
# (Built with --no-weight-check: what this tests never reads the weight
# check, weights_scale.sh shows it changes no subgraph, and its runs are
# most of extract's time on this corpus.)
. "$ROOT/tests/cli/lib.sh"
need_corpus
db="$TEST_TMP/db"
pn --db "$db" build --no-weight-check "$CORPUS" "$TESTDATA"
[ "$status" -eq 0 ] || fail "build: $out"
echo "$out"
pn --db "$db" doctor --deep
echo "$out" | tail -n 3
[ "$status" -eq 0 ] || fail "doctor --deep found problems"
n=$(echo "$out" | sed -n 's/^doctor: \([0-9]*\) records checked.*/\1/p')
# doctor reads every record of these tables: their entries as LMDB counts them
want=$(mdb_stat -a "$db" | awk '
	/^Status of / { t = $3 }
	/^  Entries: / && t ~ /^(model_paths|models|errors|candidates|structures|aliases|graphs|subgraphs|occurrences|ranges|profiles)$/ { n += $2 }
	END { print n + 0 }')
echo "mdb_stat: $want entries in the tables doctor checks"
expect_eq "${n:-0}" "$want" "records checked"
# the candidates table holds one list per (structure, strategy), and a
# record of its own only for a kept corpus block (index 0x40000000 + i):
# 5 lists (every strategy) for every structure, not a record per candidate
mdb_dump -s candidates "$db" | awk '
	/^HEADER=END/ { body = 1; next }
	!body || /^DATA=END/ { next }
	++line % 2 == 1 {
		s[substr($1, 1, 32)] = 1
		idx = substr($1, length($1) - 7)
		if (idx == "ffffffff") lists++
		else if (idx < "40000000") loose++
	}
	END {
		for (k in s) n++
		printf "%d structures, %d lists, %d candidates outside a list\n", n, lists, loose
		exit !(n > 0 && lists == 5 * n && loose == 0)
	}' || fail "the candidates table is not one list per (structure, strategy)"
subgraphs=$(mdb_stat -s subgraphs "$db" | sed -n 's/^  Entries: //p')
[ "${subgraphs:-0}" -ge 1000 ] || fail "only ${subgraphs:-0} subgraphs stored"
pn --db "$db" --json stats
expect_contains "$out" '"subgraphs":' "stats reports subgraphs"
