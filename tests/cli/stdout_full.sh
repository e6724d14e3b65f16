# Output that cannot be written is a failure: passnet flushes and closes
# stdout at the end and exits non-zero with one line when that fails
# (/dev/full: every write gets ENOSPC), where a silent exit 0 would pass a
# truncated listing on as complete.
. "$ROOT/tests/cli/lib.sh"
relu=$TESTDATA/node/test_relu
[ -d "$relu" ] || fail "no ONNX backend tests at $TESTDATA (make deps installs libonnx-testdata)"
[ -w /dev/full ] || fail "no /dev/full on this machine"
db="$TEST_TMP/db"

# full_fails WHAT ARGS...: stdout to /dev/full exits non-zero, one stderr line.
full_fails() {
	what=$1
	shift
	set +e
	"$PASSNET" "$@" >/dev/full 2>"$TEST_TMP/err"
	rc=$?
	set -e
	[ "$rc" -ne 0 ] || fail "$what > /dev/full exited 0"
	expect_eq "$(wc -l <"$TEST_TMP/err" | tr -d ' ')" 1 "$what > /dev/full: one error line ($(cat "$TEST_TMP/err"))"
	expect_contains "$(cat "$TEST_TMP/err")" "standard output" "$what > /dev/full"
}

full_fails "--help" --help
full_fails "ls --help" ls --help

pn --db "$db" -q extract "$relu"
[ "$status" -eq 0 ] || fail "extract: $out"
pn --db "$db" ls
[ "$status" -eq 0 ] || fail "ls: $out"
expect_contains "$out" "test_relu" "ls lists the model"
full_fails "ls" --db "$db" ls
full_fails "ls --json" --db "$db" --json ls

# The same commands to a writable place still succeed.
"$PASSNET" --help >"$TEST_TMP/help" || fail "--help to a file failed"
"$PASSNET" --db "$db" ls >"$TEST_TMP/ls" || fail "ls to a file failed"
[ -s "$TEST_TMP/ls" ] || fail "ls to a file wrote nothing"
echo "stdout_full: a failed write of stdout is a non-zero exit"
