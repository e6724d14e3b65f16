# The report ranks patterns by what a compiler could win (report/rank.h):
# on a store of small models (tests/fixtures/rank_models.py) holding
# shape-only cuts, an If and real work (MatMul, Conv), measured by `exec`,
# the top table lists only cuts with real work (or of a cost not known: a
# NonZero's count), most excess time first, and
# the table set apart below holds the control-flow, shape-only and
# little-work cuts, each with its kind; every measured pattern is in one of
# the two, and the page states the rule.
. "$ROOT/tests/cli/lib.sh"
models="$TEST_TMP/models"
db="$TEST_TMP/db"
"$PY" "$ROOT/tests/fixtures/rank_models.py" "$models" || fail "fixture maker"
pn --db "$db" -q build --variants 0 "$models"
[ "$status" -eq 0 ] || fail "build: $out"
pn --db "$db" exec --warmup 1 --trials 2
[ "$status" -eq 0 ] || fail "exec: $out"
pn --db "$db" --json stats
profiled=$(echo "$out" | sed 's/.*"profiled":\([0-9]*\).*/\1/')
failed=$(echo "$out" | sed 's/.*"profile_failed":\([0-9]*\).*/\1/')
expect_eq "$failed" 0 "failed profiles"
pn --db "$db" report --out "$TEST_TMP/report" --top 50
[ "$status" -eq 0 ] || fail "report: $out"
expect_contains "$out" "$profiled profiled ($profiled measured)" "report summary"

"$PY" - "$TEST_TMP/report/index.html" <<'PYEOF' || fail "the ranking of the page is wrong"
import html.parser, re, sys

class Tables(html.parser.HTMLParser):
    """Rows of each table with an id, as lists of cell texts."""
    def __init__(self):
        super().__init__()
        self.tables, self.cur, self.row, self.cell, self.ids = {}, None, None, None, []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.cur = a.get("id")
            self.tables[self.cur] = []
        elif tag == "tr" and self.cur:
            self.row = []
        elif tag == "td" and self.row is not None:
            self.cell = ""
        if "id" in a:
            self.ids.append(a["id"])
    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None:
            self.row.append(" ".join(self.cell.split()))
            self.cell = None
        elif tag == "tr" and self.row is not None:
            if self.row:
                self.tables[self.cur].append(self.row)
            self.row = None
        elif tag == "table":
            self.cur = None
    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data

page = open(sys.argv[1]).read()
t = Tables()
t.feed(page)
top, apart = t.tables.get("slow-patterns", []), t.tables.get("set-apart-patterns", [])
ok = True
def check(cond, what):
    global ok
    if not cond:
        print("FAILED:", what, file=sys.stderr)
        ok = False

WORK = {"MatMul", "Conv", "Relu"}
CONTROL = {"If"}
SHAPE = {"Shape", "Gather", "Unsqueeze", "Concat"}
# top: # | pattern | ops | shapes | variants | occurrences | excess | ...
# A cut holding NonZero has a value whose dims depend on data in the cut:
# the cost model counts it as no bytes, so its small cost is not known to be
# little work, and it stays ranked (report/rank.h).
check(len(top) >= 4, "top rows: %d" % len(top))
for r in top:
    ops = set(r[2].split())
    check(ops <= WORK or "NonZero" in ops, "a cut without real work in the top table: %s" % r[2])
check(any("NonZero" in r[2] for r in top), "the cuts of unknown cost are ranked")
excess = [float(r[6]) for r in top]
check(excess == sorted(excess, reverse=True), "top table not in excess order: %s" % excess)
check(any("MatMul" in r[2] for r in top) and any("Conv" in r[2] for r in top),
      "MatMul and Conv cuts in the top table")

# apart: # | pattern | kind | ops | shapes | variants | occurrences | excess | ...
kinds = {}
for r in apart:
    kind, ops = r[2], set(r[3].split())
    kinds[kind] = kinds.get(kind, 0) + 1
    check(not ops & {"MatMul", "Conv", "NonZero"}, "real work set apart: %s" % r[3])
    if ops & CONTROL:
        check(kind == "control", "%s is %s, not control" % (r[3], kind))
    elif ops <= SHAPE:
        check(kind == "shape-only", "%s is %s, not shape-only" % (r[3], kind))
    else:
        check(kind == "little work", "%s is %s, not little work" % (r[3], kind))
excess = [float(r[7]) for r in apart]
check(excess == sorted(excess, reverse=True), "set-apart table not in excess order: %s" % excess)

# the note counts every set-apart pattern by kind; with the top table they
# are every measured pattern
note = re.search(r'id="set-apart-note">(\d+) measured patterns are control flow \((\d+)\), '
                 r'shape-only \((\d+)\) or do less than 4096 flops \+ bytes of work \((\d+)\)',
                 page)
head = re.search(r'The (\d+) patterns \(of (\d+) with real work, (\d+) with a measured variant\)',
                 page)
check(note and head, "the notes of the two tables")
if note and head:
    n, control, shape, little = map(int, note.groups())
    shown, work, measured = map(int, head.groups())
    check(n == control + shape + little, "set-apart counts: %s" % (note.groups(),))
    check(work + n == measured, "%d with work + %d set apart != %d measured" % (work, n, measured))
    check(shown == work == len(top), "every work pattern shown with --top 50")
    check(len(apart) == min(n, 10), "%d set-apart rows of %d" % (len(apart), n))
    check(control >= 2 and shape >= 3 and little >= 1, "kinds: %s" % (note.groups(),))
    check(kinds.get("control", 0) >= 1 and kinds.get("shape-only", 0) >= 1,
          "rows by kind: %s" % kinds)
check("rank-rule" in t.ids and "excess time" in page, "the page states the rule")
print("top %d rows, set apart %d rows %s" % (len(top), len(apart), kinds))
sys.exit(0 if ok else 1)
PYEOF
