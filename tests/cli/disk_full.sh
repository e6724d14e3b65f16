# A full disk stops a run with one line naming the store and the cause,
# leaves the store readable and consistent with every committed record
# intact, and the run resumes once there is room, to the store a run with
# room from the start gives (mdb_dump).
#
# The store sits on a tmpfs the test mounts, of half the size the store of
# the same build takes (measured first, at least 2 MiB): the first commits
# fit, the build does not.  Where mounting is not allowed (no
# CAP_SYS_ADMIN), the same is done with the kernel's file-size limit
# (ulimit -f, SIGXFSZ ignored), so that data.mdb cannot grow past that size:
# a write past it fails as it would on a full disk.  Either way the kernel
# refuses the write.  (Built with --no-weight-check: its runs come before
# any write, and they are most of extract's time on this corpus.)
. "$ROOT/tests/cli/lib.sh"
need_corpus
models="$CORPUS/models"
pn --db "$TEST_TMP/ref" build --no-weight-check --variants 0 "$models"
[ "$status" -eq 0 ] || fail "reference build: $out"
kib=$(du -k "$TEST_TMP/ref/data.mdb" | cut -f1)
kib=$((kib / 2 > 2048 ? kib / 2 : 2048))
mnt="$TEST_TMP/small"
mkdir -p "$mnt"
mode=tmpfs
# DISK_FULL_MODE=ulimit tries the fallback where mounting would work
if [ "${DISK_FULL_MODE:-}" = ulimit ] || ! mount -t tmpfs -o size=${kib}k tmpfs "$mnt" 2>/dev/null; then
	mode=ulimit
fi
cleanup() { [ "$mode" != tmpfs ] || umount "$mnt" 2>/dev/null || true; }
trap cleanup EXIT
echo "disk_full: the store on a $mode of $kib KiB (half the store of the build)"
db="$mnt/db"
build_small() {   # the build with its writes limited to 3 MiB
	if [ "$mode" = tmpfs ]; then
		pn --db "$db" build --no-weight-check --variants 0 "$models"
	else
		set +e
		# ulimit -f counts blocks of 512 bytes
		out=$(trap '' XFSZ; ulimit -f $((kib * 2)); "$PASSNET" --db "$db" build --no-weight-check --variants 0 "$models" 2>&1)
		status=$?
		set -e
	fi
}

# 1. the run stops with one line naming the store and the cause
build_small
[ "$status" -ne 0 ] || fail "a build on a full disk exited 0: $out"
line=$(echo "$out" | grep '^passnet: ' || true)
[ "$(echo "$line" | grep -c .)" -eq 1 ] || fail "expected one error line, got: $out"
expect_contains "$line" "store $db" "the error names the store"
if [ "$mode" = tmpfs ]; then
	expect_contains "$line" "filesystem is full" "the error names the cause"
fi
echo "1. $line"

# 2. the store is readable and consistent, what was committed intact
pn --db "$db" doctor --deep
[ "$status" -eq 0 ] || fail "doctor after the full disk: $out"
pn --db "$db" ls
committed=$(echo "$out" | grep -c . || true)
[ "$committed" -ge 1 ] || fail "nothing was committed before the disk filled up"
echo "2. doctor clean; $committed models committed"

# 3. with room, the same command resumes to the store of a run with room
if [ "$mode" = tmpfs ]; then
	mount -o remount,size=$((kib * 8))k "$mnt" || fail "cannot grow the tmpfs"
	pn --db "$db" build --no-weight-check --variants 0 "$models"
else
	pn --db "$db" build --no-weight-check --variants 0 "$models"
fi
[ "$status" -eq 0 ] || fail "the resumed build failed: $out"
dump "$db" "$TEST_TMP/resumed.dump"
dump "$TEST_TMP/ref" "$TEST_TMP/ref.dump"
cmp -s "$TEST_TMP/resumed.dump" "$TEST_TMP/ref.dump" ||
	fail "the build resumed after the full disk gives another store than one with room"
echo "3. resumed with room: the same store as a build with room from the start"
echo "disk_full: ok"
