# The canonical hash sees exactly what changes a computation: one attribute,
# dim, dtype, operand order of a non-commutative op, small constant value, or
# sharing of a value changes it; defaults written out, commutative operand
# order, NaN bits, names and node order do not.  Two graphs that
# Weisfeiler-Lehman refinement cannot tell apart (one 12-cycle against two
# 6-cycles) get different hashes.  The pattern hash ignores dims (also which
# of them are equal) and dtypes, but not attributes or ranks.
. "$ROOT/tests/cli/lib.sh"
PY=${PYTHON:-/usr/bin/python3}
d="$TEST_TMP/pairs"
"$PY" "$ROOT/tests/fixtures/hash_pairs.py" "$d"
n=0
while read -r name expect kind; do
	col=1
	[ "$kind" = pattern ] && col=2
	a=$("$PASSNET" hash "$d/${name}_a.onnx" | awk -v c=$col '{print $c}')
	b=$("$PASSNET" hash "$d/${name}_b.onnx" | awk -v c=$col '{print $c}')
	[ -n "$a" ] && [ -n "$b" ] || fail "$name: no hash"
	if [ "$expect" = same ]; then
		[ "$a" = "$b" ] || fail "$name: $kind hashes should be equal ($a vs $b)"
	else
		[ "$a" != "$b" ] || fail "$name: $kind hashes should differ (both $a)"
	fi
	echo "$name: $kind $expect"
	n=$((n + 1))
done < "$d/pairs.txt"
[ "$n" -ge 15 ] || fail "only $n pairs checked"
