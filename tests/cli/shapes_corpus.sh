# Every model of the corpus gets full shapes: the values whose dims stay
# unknown after inference all depend on data (stats reports no inference gap,
# and only the detection models, with NonZero/NMS/Loop/If, have any); and the
# shapes inference gives the zoo models equal the ones their runs produce.
# (Built with --no-weight-check: what this tests never reads the weight
# check, weights_scale.sh shows it changes no subgraph, and its runs are
# most of extract's time on this corpus.)
. "$ROOT/tests/cli/lib.sh"
need_corpus
db="$TEST_TMP/db"
pn --db "$db" extract --no-weight-check "$CORPUS"
[ "$status" -eq 0 ] || fail "extract: $out"
pn --db "$db" --json stats
expect_contains "$out" '"inference_gaps":0,' "no value is left unknown by a gap in inference"
pn --db "$db" stats --unknown
echo "$out" | grep -A12 "where unknown dims start"
models=$(echo "$out" | grep '^unknown  ' | awk '{print $3}' | sort -u)
for m in $models; do
	case "$m" in
	*rcnn* | *retinanet* | *fcos* | *ssd*) ;;
	*) fail "$m has values with unknown dims but holds no data-dependent op" ;;
	esac
done

# Unpack the zoo with the archivers users have, then compare shapes.
z="$TEST_TMP/zoo"
mkdir -p "$z"
cd "$z"
for f in "$CORPUS"/zoo/*.tar.gz; do tar xzf "$f"; done
for f in "$CORPUS"/zoo/*.zip; do unzip -q -o "$f"; done
for d in */; do
	pn run "$d" --check-shapes
	[ "$status" -eq 0 ] || fail "$d: $out"
	line=$(echo "$out" | grep "^shapes:")
	echo "$d $line"
	expect_contains "$line" " 0 mismatched" "$d shapes"
	expect_contains "$line" " 0 left open" "$d shapes all inferred"
done
