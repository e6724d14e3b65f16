# lib.sh - helpers for CLI tests (sourced).  Each check prints what it
# expected on failure and exits non-zero, so the first broken promise
# stops the script with a readable reason.
set -eu
: "${PASSNET:?}" "${TEST_TMP:?}" "${ROOT:?}"
SHARED=${SHARED:-$ROOT/../shared/corpus}
TESTDATA=${TESTDATA:-/usr/share/libonnx-testdata/data}

fail() { echo "FAILED: $*" >&2; exit 1; }

# expect_contains "haystack" "needle" "what"
expect_contains() {
	case "$1" in *"$2"*) ;; *) fail "$3: expected to find '$2' in: $1" ;; esac
}

expect_eq() {
	[ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"
}

# runs passnet, captures stdout+stderr in $out and status in $status
pn() {
	set +e
	out=$("$PASSNET" "$@" 2>&1)
	status=$?
	set -e
}

# Exits 77 (skipped, with the reason) when ../shared/corpus is absent: CI
# has it beside the checkout, a fresh user does not.
need_shared() {
	[ -d "$SHARED/models" ] || { echo "no shared corpus at $SHARED"; exit 77; }
}
