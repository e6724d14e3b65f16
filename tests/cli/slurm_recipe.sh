# The Slurm recipe of contrib/slurm: (a) its scripts run by hand as Slurm
# would run them (SLURM_ARRAY_TASK_ID and the rest set, task by task) -
# their usage errors, the passnet commands they run, the copies they leave -
# and the merged store equals a one-process build (mdb_dump -a, byte for
# byte); the exec chain by hand: a ranges array (each task runs its
# shard's models once), their merge, an exec array that then runs no model
# at all, and the merge of its profiles, equal to one exec but for times;
# (b) the same on a real single-node Slurm cluster started here (munged,
# slurmctld, slurmd, all in TEST_TMP on free ports): submit.sh's arrays,
# each with its dependent merge.
. "$ROOT/tests/cli/lib.sh"
need_corpus
# Run inside a Slurm job, the test must not take that job's task for its own.
unset SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT SLURM_ARRAY_JOB_ID SLURM_JOB_ID SLURM_CPUS_PER_TASK
recipe="$ROOT/contrib/slurm"
for tool in mdb_copy mdb_dump; do
	command -v "$tool" >/dev/null || fail "no $tool (make deps installs lmdb-utils)"
done

N=3
set -- "$CORPUS/models/squeezenet1_1" "$CORPUS/models/gpt2_tiny" "$CORPUS/models/bigru_tagger" \
	"$CORPUS/models/lstm_lm" "$CORPUS/models/mobilenet_v3_small" "$CORPUS/zoo/nested-bundle.tar"
sources="$*"
build_opts="--variants 2"


# The reference: one process, every source.
pn --db "$TEST_TMP/one" build $build_opts "$@"
[ "$status" -eq 0 ] || fail "one-process build: $out"
dump "$TEST_TMP/one" "$TEST_TMP/one.dump"

# script NAME [ARG...]: runs contrib/slurm/NAME with the environment the
# caller set; $out, $status as pn gives them.
script() {
	s=$1
	shift
	set +e
	out=$(sh "$recipe/$s" "$@" 2>&1)
	status=$?
	set -e
}

# usage_error WHAT NEEDLE: the last script exited 2 with its usage and NEEDLE.
usage_error() {
	[ "$status" -eq 2 ] || fail "$1: expected exit 2, got $status: $out"
	expect_contains "$out" "usage:" "$1"
	expect_contains "$out" "$2" "$1"
}

# ---- (a) argument handling ----
D="$TEST_TMP/shared"
script passnet-shard.sbatch
usage_error "shard, no arguments" "no mode"
script passnet-shard.sbatch --shared "$D" build "$@"
usage_error "shard, no --shards" "--shards N is required"
for n in 0 -1 x 2x 03; do
	SLURM_ARRAY_TASK_ID=0 script passnet-shard.sbatch --shards "$n" --shared "$D" build "$@"
	usage_error "shard, --shards $n" "not a positive integer"
done
script passnet-shard.sbatch --shards
usage_error "shard, --shards without a value" "--shards needs a value"
script passnet-shard.sbatch --shards 3 build "$@"
usage_error "shard, no --shared" "--shared DIR is required"
script passnet-shard.sbatch --shards 3 --shared "$D" build "$@"
usage_error "shard, outside an array" "SLURM_ARRAY_TASK_ID is unset"
SLURM_ARRAY_TASK_ID=3 script passnet-shard.sbatch --shards 3 --shared "$D" build "$@"
usage_error "shard, task 3 of 3" "task 3 is not a shard of 3"
SLURM_ARRAY_TASK_ID=x script passnet-shard.sbatch --shards 3 --shared "$D" build "$@"
usage_error "shard, task x" "not a task index"
SLURM_ARRAY_TASK_ID=0 script passnet-shard.sbatch --shards 3 --shared "$D" build
usage_error "shard, build without sources" "build needs sources"
SLURM_ARRAY_TASK_ID=0 script passnet-shard.sbatch --shards 3 --shared "$D" exec
usage_error "shard, exec without --from" "exec needs --from STORE"
SLURM_ARRAY_TASK_ID=0 script passnet-shard.sbatch --shards 3 --shared "$D" ranges
usage_error "shard, ranges without --from" "ranges needs --from STORE"
SLURM_ARRAY_TASK_ID=0 script passnet-shard.sbatch --shards 3 --shared "$D" --bogus build "$@"
usage_error "shard, unknown option" "unknown option '--bogus'"
[ ! -e "$D" ] || fail "a usage error created $D"

script passnet-merge.sbatch
usage_error "merge, no arguments" "--shards N is required"
script passnet-merge.sbatch --shards 3 --shared "$D"
usage_error "merge, no --out" "--out OUT is required"
script passnet-merge.sbatch --shards 2.5 --shared "$D" --out "$TEST_TMP/out"
usage_error "merge, --shards 2.5" "not a positive integer"
script passnet-merge.sbatch --shards 3 --shared "$D" --out "$TEST_TMP/out" --prefix other
usage_error "merge, --prefix other" "shard, ranges or profile"
script passnet-merge.sbatch --shards 3 --shared "$D" --out "$TEST_TMP/out" extra
usage_error "merge, a stray argument" "unknown argument 'extra'"

script submit.sh
usage_error "submit, no arguments" "--shards N is required"
script submit.sh --shards 3 --shared "$D" "$@"
usage_error "submit, no --out" "--out OUT is required"
script submit.sh --shards 3 --shared "$D" --out "$TEST_TMP/out"
usage_error "submit, no sources" "no sources"
script submit.sh --shards 0 --shared "$D" --out "$TEST_TMP/out" "$@"
usage_error "submit, --shards 0" "not a positive integer"
script submit.sh --shards 3 --shared "$D" --out "$TEST_TMP/out" --variants 2 "$@"
usage_error "submit, a build option before --" "build options go after --"
script submit.sh --shards 3 --shared "$D" --out "$TEST_TMP/out" --manifest "$TEST_TMP/none.txt"
usage_error "submit, a missing manifest" "no such file"
script submit.sh --shards 3 --shared "$D" --out "$TEST_TMP/out" --exec-opts "--trials 1" "$@"
usage_error "submit, --exec-opts without --exec" "--exec-opts without --exec"
script submit.sh --shards 3 --shared "$TEST_TMP/a b" --out "$TEST_TMP/out" "$@"
usage_error "submit, a blank in a path" "paths with blanks are not supported"
[ ! -e "$D" ] || fail "a usage error created $D"

# What submit.sh would submit: the array of N, the merge after it (the
# passnet of $PASSNET unless --passnet names one).
script submit.sh --dry-run --shards 3 --shared "$D" --out "$TEST_TMP/out" --passnet /opt/pn \
	--sbatch-opts "--partition=p1" -- $build_opts "$@"
[ "$status" -eq 0 ] || fail "submit --dry-run: $out"
want="sbatch --partition=p1 --array=0-2 -o $D/logs/build-%A_%a.out $recipe/passnet-shard.sbatch --shards 3 --shared $D --passnet /opt/pn build $build_opts $sources
build JOB1
sbatch --partition=p1 --dependency=afterok:JOB1 -o $D/logs/merge-%j.out $recipe/passnet-merge.sbatch --shards 3 --shared $D --passnet /opt/pn --out $TEST_TMP/out
merge JOB2"
expect_eq "$out" "$want" "submit --dry-run"
script submit.sh --dry-run --exec --exec-opts "--trials 1" --shards 2 --shared "$D" --out "$TEST_TMP/out" \
	--local /scratch "$@"
[ "$status" -eq 0 ] || fail "submit --dry-run --exec: $out"
c="--shards 2 --shared $D --passnet $PASSNET --local /scratch"
want="sbatch --array=0-1 -o $D/logs/build-%A_%a.out $recipe/passnet-shard.sbatch $c build $sources
build JOB1
sbatch --dependency=afterok:JOB1 -o $D/logs/merge-%j.out $recipe/passnet-merge.sbatch $c --out $TEST_TMP/out --calibrate
merge JOB2
sbatch --array=0-1 --dependency=afterok:JOB2 -o $D/logs/ranges-%A_%a.out $recipe/passnet-shard.sbatch $c ranges --from $TEST_TMP/out --trials 1
ranges JOB3
sbatch --dependency=afterok:JOB3 -o $D/logs/merge-ranges-%j.out $recipe/passnet-merge.sbatch $c --out $TEST_TMP/out --prefix ranges
merge-ranges JOB4
sbatch --array=0-1 --dependency=afterok:JOB4 -o $D/logs/exec-%A_%a.out $recipe/passnet-shard.sbatch $c exec --from $TEST_TMP/out --trials 1
exec JOB5
sbatch --dependency=afterok:JOB5 -o $D/logs/merge-profiles-%j.out $recipe/passnet-merge.sbatch $c --out $TEST_TMP/out --prefix profile
merge-profiles JOB6"
expect_eq "$out" "$want" "submit --dry-run --exec"

# ---- (a) the tasks run by hand, each as Slurm would start it ----
# A passnet that logs every command the scripts run, then runs it.
logged="$TEST_TMP/passnet-logged"
printf '#!/bin/sh\nprintf "%%s\\n" "$*" >>"%s"\nexec "%s" "$@"\n' "$TEST_TMP/commands" "$PASSNET" >"$logged"
chmod +x "$logged"
node="$TEST_TMP/node-local"
mkdir -p "$node"

# The merge refuses while a shard is missing, and names it.
SLURM_JOB_ID=200 TMPDIR="$node" script passnet-merge.sbatch --shards $N --shared "$D" \
	--out "$TEST_TMP/out" --passnet "$logged"
[ "$status" -eq 1 ] || fail "merge without shards: expected exit 1, got $status: $out"
expect_contains "$out" "$D/shard-0: missing" "merge without shards"
[ ! -e "$TEST_TMP/out" ] || fail "a refused merge created its OUT"

: >"$TEST_TMP/commands"
want=""
k=0
while [ "$k" -lt $N ]; do
	# SLURM_ARRAY_TASK_COUNT differs from N on purpose: a rerun of some
	# tasks only, where the script must take N from --shards.
	env SLURM_ARRAY_JOB_ID=100 SLURM_ARRAY_TASK_ID=$k SLURM_ARRAY_TASK_COUNT=1 \
		SLURM_JOB_ID=$((100 + k)) TMPDIR="$node" \
		sh "$recipe/passnet-shard.sbatch" --shards $N --shared "$D" --passnet "$logged" \
		build $build_opts "$@" >"$TEST_TMP/task-$k.log" 2>&1 ||
		fail "task $k: $(cat "$TEST_TMP/task-$k.log")"
	want="$want--db $node/passnet-shard-$k.$((100 + k))/store build --shard $k/$N $build_opts $sources
"
	[ -f "$D/shard-$k/data.mdb" ] || fail "task $k left no $D/shard-$k/data.mdb"
	k=$((k + 1))
done
expect_eq "$(cat "$TEST_TMP/commands")" "${want%?}" "the commands of the array's tasks"
[ -z "$(ls -A "$node")" ] || fail "the tasks left files on node-local disk: $(ls -A "$node")"
[ -z "$(ls -A "$D" | grep -v '^shard-[0-2]$')" ] || fail "stray files in $D: $(ls -A "$D")"

# Every shard is a part, none the whole: the test would prove nothing if
# one shard held every model.
pn --db "$TEST_TMP/one" ls
total=$(printf '%s\n' "$out" | grep -c .)
sum=0 nonempty=0
for k in 0 1 2; do
	pn --db "$D/shard-$k" ls
	[ "$status" -eq 0 ] || fail "ls shard-$k: $out"
	c=$(printf '%s\n' "$out" | grep -c . || true)
	sum=$((sum + c))
	[ "$c" -eq 0 ] || nonempty=$((nonempty + 1))
done
[ "$sum" -eq "$total" ] || fail "the shards hold $sum models, the one-process build $total"
[ "$nonempty" -ge 2 ] || fail "only $nonempty of $N shards hold models"

# A task with cores of its own passes them on as -j.
: >"$TEST_TMP/commands"
env SLURM_ARRAY_TASK_ID=1 SLURM_CPUS_PER_TASK=2 SLURM_JOB_ID=300 TMPDIR="$node" \
	sh "$recipe/passnet-shard.sbatch" --shards $N --shared "$D" --passnet "$logged" \
	build $build_opts "$@" >"$TEST_TMP/task-1b.log" 2>&1 || fail "task 1 again: $(cat "$TEST_TMP/task-1b.log")"
expect_eq "$(cat "$TEST_TMP/commands")" \
	"--db $node/passnet-shard-1.300/store -j 2 build --shard 1/$N $build_opts $sources" "a task with 2 CPUs"

# The merge job.
: >"$TEST_TMP/commands"
SLURM_JOB_ID=201 TMPDIR="$node" script passnet-merge.sbatch --shards $N --shared "$D" \
	--out "$TEST_TMP/out" --passnet "$logged"
[ "$status" -eq 0 ] || fail "merge: $out"
expect_eq "$(cat "$TEST_TMP/commands")" "--db $node/passnet-merge.201/store merge --strict $D/shard-0 $D/shard-1 $D/shard-2
--db $TEST_TMP/out stats --brief" "the merge job's commands"
[ -z "$(ls -A "$node")" ] || fail "the merge left files on node-local disk: $(ls -A "$node")"
dump "$TEST_TMP/out" "$TEST_TMP/out.dump"
cmp -s "$TEST_TMP/one.dump" "$TEST_TMP/out.dump" ||
	fail "the merged store differs from a one-process build (mdb_dump -a $TEST_TMP/one, $TEST_TMP/out)"

# The merge job run again (a requeue) merges into the existing OUT and
# leaves it as it was.
SLURM_JOB_ID=202 TMPDIR="$node" script passnet-merge.sbatch --shards $N --shared "$D" \
	--out "$TEST_TMP/out" --passnet "$PASSNET"
[ "$status" -eq 0 ] || fail "merge again: $out"
dump "$TEST_TMP/out" "$TEST_TMP/out2.dump"
cmp -s "$TEST_TMP/one.dump" "$TEST_TMP/out2.dump" || fail "merging again into OUT changed it"
echo "by hand: $N tasks and the merge give the one-process store ($total models)"

# The same with the sources in a manifest, given to submit.sh by a relative
# path: the tasks get it absolute, and the merge equals one build of it.
cat >"$TEST_TMP/m.txt" <<EOT
[trained-models]
squeezenet  dir  $CORPUS/models/squeezenet1_1  -  MIT  a
gpt2        dir  $CORPUS/models/gpt2_tiny      -  MIT  b
[others]
bigru       dir  $CORPUS/models/bigru_tagger   -  MIT  c
lstm        dir  $CORPUS/models/lstm_lm        -  MIT  d
EOT
(cd "$TEST_TMP" && sh "$recipe/submit.sh" --dry-run --shards $N --shared "$D" --out out --manifest m.txt) \
	>"$TEST_TMP/dry.log" 2>&1 || fail "submit --dry-run --manifest: $(cat "$TEST_TMP/dry.log")"
expect_contains "$(cat "$TEST_TMP/dry.log")" "build --manifest $TEST_TMP/m.txt
build JOB1" "submit --manifest m.txt"
expect_contains "$(cat "$TEST_TMP/dry.log")" "--out $TEST_TMP/out
merge JOB2" "submit --out out"
pn --db "$TEST_TMP/one-m" build --manifest "$TEST_TMP/m.txt"
[ "$status" -eq 0 ] || fail "one-process build --manifest: $out"
DM="$TEST_TMP/shared-m"
for k in 0 1 2; do
	env SLURM_ARRAY_TASK_ID=$k SLURM_JOB_ID=$((120 + k)) TMPDIR="$node" \
		sh "$recipe/passnet-shard.sbatch" --shards $N --shared "$DM" --passnet "$PASSNET" \
		build --manifest "$TEST_TMP/m.txt" >"$TEST_TMP/task-m-$k.log" 2>&1 ||
		fail "manifest task $k: $(cat "$TEST_TMP/task-m-$k.log")"
done
SLURM_JOB_ID=220 TMPDIR="$node" script passnet-merge.sbatch --shards $N --shared "$DM" \
	--out "$TEST_TMP/out-m" --passnet "$PASSNET"
[ "$status" -eq 0 ] || fail "merge of the manifest's shards: $out"
dump "$TEST_TMP/one-m" "$TEST_TMP/one-m.dump"
dump "$TEST_TMP/out-m" "$TEST_TMP/out-m.dump"
cmp -s "$TEST_TMP/one-m.dump" "$TEST_TMP/out-m.dump" ||
	fail "the merged manifest shards differ from one build --manifest (mdb_dump -a $TEST_TMP/one-m, $TEST_TMP/out-m)"
echo "by hand: $N tasks of a manifest and the merge give one build --manifest"

# ---- (a) the exec phase by hand: merge with a calibration, N ranges shards
# on copies of it and their merge, N exec shards on copies of that, a merge
# of their profiles; against one exec of the calibrated store ----
exec_opts="--warmup 0 --trials 1 --repeats 1 --min-nodes 8"
P="$TEST_TMP/profiled"
SLURM_JOB_ID=210 TMPDIR="$node" script passnet-merge.sbatch --shards $N --shared "$D" \
	--out "$P" --calibrate --passnet "$PASSNET"
[ "$status" -eq 0 ] || fail "merge --calibrate: $out"
pn --db "$P" calibrate --show
[ "$status" -eq 0 ] || fail "merge --calibrate left no calibration: $out"
mkdir "$TEST_TMP/ref"
mdb_copy "$P" "$TEST_TMP/ref" || fail "mdb_copy $P"
pn --db "$TEST_TMP/ref" exec $exec_opts
[ "$status" -eq 0 ] || fail "one-process exec: $out"

SLURM_ARRAY_TASK_ID=0 TMPDIR="$node" script passnet-shard.sbatch --shards $N --shared "$D" \
	--passnet "$PASSNET" exec --from "$TEST_TMP/nothing"
[ "$status" -eq 1 ] || fail "exec from no store: expected exit 1, got $status: $out"
expect_contains "$out" "$TEST_TMP/nothing: no store" "exec from no store"
[ ! -e "$D/profile-0" ] || fail "an exec task without a store left $D/profile-0"

# The ranges array: each task runs the models of its shard, and together
# they run each model once.
: >"$TEST_TMP/commands"
want=""
ran=0
for k in 0 1 2; do
	env SLURM_ARRAY_TASK_ID=$k SLURM_JOB_ID=$((130 + k)) TMPDIR="$node" \
		sh "$recipe/passnet-shard.sbatch" --shards $N --shared "$D" --passnet "$logged" \
		ranges --from "$P" $exec_opts >"$TEST_TMP/ranges-$k.log" 2>&1 ||
		fail "ranges task $k: $(cat "$TEST_TMP/ranges-$k.log")"
	want="$want--db $node/passnet-ranges-$k.$((130 + k))/store exec --shard $k/$N --ranges-only $exec_opts
"
	[ -f "$D/ranges-$k/data.mdb" ] || fail "ranges task $k left no $D/ranges-$k/data.mdb"
	r=$(sed -n 's/^ranges: \([0-9]*\) models run.*/\1/p' "$TEST_TMP/ranges-$k.log")
	ran=$((ran + ${r:-0}))
done
expect_eq "$(cat "$TEST_TMP/commands")" "${want%?}" "the commands of the ranges array's tasks"
mkdir "$TEST_TMP/ranges-one"
mdb_copy "$P" "$TEST_TMP/ranges-one" || fail "mdb_copy $P"
pn --db "$TEST_TMP/ranges-one" exec --ranges-only $exec_opts
one=$(printf '%s\n' "$out" | sed -n 's/^ranges: \([0-9]*\) models run.*/\1/p')
[ "${one:-0}" -gt 0 ] || fail "one ranges run ran no model: $out"
expect_eq "$ran" "$one" "models (and shape variants) run by the ranges array: those of one run, each once"
SLURM_JOB_ID=213 TMPDIR="$node" script passnet-merge.sbatch --shards $N --shared "$D" \
	--out "$P" --prefix ranges --passnet "$PASSNET"
[ "$status" -eq 0 ] || fail "merge of the ranges: $out"

# profiles STORE: how many profiles STORE holds.
profiles() { mdb_dump -s profiles "$1" | sed '1,/^HEADER=END/d' | grep -c '^ ' || true; }
all=$(profiles "$TEST_TMP/ref")
[ "$((all / 2))" -gt 0 ] || fail "the one-process exec profiled nothing: $out"

: >"$TEST_TMP/commands"
want=""
sum=0 nonempty=0
# Task 1 plays another node (passnet's host name): exec measures that node
# and makes it its store's calibration, so the profile merge meets two.
for k in 0 1 2; do
	host_k=$([ $k = 1 ] && echo other-node || hostname)
	env SLURM_ARRAY_TASK_ID=$k SLURM_JOB_ID=$((110 + k)) TMPDIR="$node" PASSNET_HOSTNAME="$host_k" \
		sh "$recipe/passnet-shard.sbatch" --shards $N --shared "$D" --passnet "$logged" \
		exec --from "$P" $exec_opts >"$TEST_TMP/exec-$k.log" 2>&1 ||
		fail "exec task $k: $(cat "$TEST_TMP/exec-$k.log")"
	want="$want--db $node/passnet-profile-$k.$((110 + k))/store exec --shard $k/$N $exec_opts
"
	! grep -a '^ranges:' "$TEST_TMP/exec-$k.log" ||
		fail "exec task $k ran models again after the ranges merge: $(cat "$TEST_TMP/exec-$k.log")"
	c=$(profiles "$D/profile-$k")
	sum=$((sum + c / 2))
	[ "$c" -eq 0 ] || nonempty=$((nonempty + 1))
done
expect_eq "$(cat "$TEST_TMP/commands")" "${want%?}" "the commands of the exec array's tasks"
[ "$sum" -eq "$((all / 2))" ] || fail "the exec shards hold $sum profiles, one exec $((all / 2))"
[ "$nonempty" -ge 2 ] || fail "only $nonempty of $N exec shards profiled anything"

: >"$TEST_TMP/commands"
SLURM_JOB_ID=211 TMPDIR="$node" script passnet-merge.sbatch --shards $N --shared "$D" \
	--out "$P" --prefix profile --passnet "$logged"
[ "$status" -eq 0 ] || fail "merge of the profiles: $out"
expect_eq "$(cat "$TEST_TMP/commands")" "--db $node/passnet-merge.211/store merge --strict $D/profile-0 $D/profile-1 $D/profile-2
--db $P stats --brief" "the profile merge's commands"
machines=$(mdb_dump -s meta "$P" | sed '1,/^HEADER=END/d' | grep -c '^ 6d616368696e652f' || true)
expect_eq "$machines" 2 "machines in the merged store (meta machine/*)"
dump "$TEST_TMP/ref" "$TEST_TMP/ref.dump"
dump "$P" "$TEST_TMP/profiled.dump"
diff=$("$PY" "$ROOT/tests/cli/store_diff.py" "$TEST_TMP/ref.dump" "$TEST_TMP/profiled.dump" --apart-from-measurements) ||
	fail "the merged exec shards differ from one exec (apart from times): $diff"
# Profiles of one subgraph measured twice (here: a store profiled whole in
# place of shard 0) are a conflict the profile merge refuses, OUT untouched.
D2="$TEST_TMP/shared2"
mkdir -p "$D2/profile-0"
mdb_copy "$TEST_TMP/ref" "$D2/profile-0" || fail "mdb_copy ref"
cp -r "$D/profile-1" "$D/profile-2" "$D2/"
SLURM_JOB_ID=212 TMPDIR="$node" script passnet-merge.sbatch --shards $N --shared "$D2" \
	--out "$P" --prefix profile --passnet "$PASSNET"
[ "$status" -eq 1 ] || fail "merge of conflicting profiles: expected exit 1, got $status: $out"
expect_contains "$out" "profiles" "merge of conflicting profiles names the table"
dump "$P" "$TEST_TMP/profiled-after.dump"
cmp -s "$TEST_TMP/profiled.dump" "$TEST_TMP/profiled-after.dump" || fail "a refused profile merge changed $P"
echo "by hand: $N ranges shards ($ran models run), $N exec shards and their merges give one exec's store but for times ($((all / 2)) profiles)"

# ---- (b) a real single-node Slurm cluster ----
# slurmd starts each job as its user, so it runs as root.
[ "$(id -u)" = 0 ] || fail "part (b) starts slurmd, which needs root (run as root, or see contrib/slurm/README.md)"
for tool in munged mungekey slurmctld slurmd sbatch scontrol; do
	command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] ||
		fail "no $tool (make deps installs slurm-wlm and munge)"
done
PATH="$PATH:/usr/sbin"
cl="$TEST_TMP/cluster"
mkdir -p "$cl/munge" "$cl/socket" "$cl/state" "$cl/spool" "$cl/log"
# munged refuses a socket its clients could not reach: every folder above
# the socket must be searchable by all.
chmod 711 "$TEST_TMP"
chmod 700 "$cl/munge"
chmod 755 "$cl" "$cl/socket"

daemons="" our_jobs=""
# Cancels this test's jobs (by id, on this test's cluster alone), then stops
# every daemon the test started, by its pid.
stop_cluster() {
	if [ -n "$our_jobs" ]; then
		# shellcheck disable=SC2086 # a list of ids
		SLURM_CONF="$cl/slurm.conf" scancel --quiet $our_jobs >/dev/null 2>&1 || true
		our_jobs=""
	fi
	if [ -n "$daemons" ]; then
		for pid in $daemons; do kill "$pid" 2>/dev/null || true; done
		for pid in $daemons; do wait "$pid" 2>/dev/null || true; done
		daemons=""
	fi
}
trap stop_cluster EXIT
trap 'stop_cluster; exit 1' INT TERM

mungekey --create --keyfile="$cl/munge/munge.key" || fail "mungekey failed"
munged --foreground --key-file="$cl/munge/munge.key" --socket="$cl/socket/munge" \
	--pid-file="$cl/munge/pid" --log-file="$cl/log/munged.log" --seed-file="$cl/munge/seed" \
	>"$cl/log/munged.out" 2>&1 &
daemons="$daemons $!"

# Two ports free now (the kernel's choice), for slurmctld and slurmd.
ports=$("$PY" -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))')
ctld_port=${ports% *}
slurmd_port=${ports#* }
host=$(hostname -s)
export SLURM_CONF="$cl/slurm.conf"
# No cgroups (a container has none to give), no accounting database.
cat >"$SLURM_CONF" <<EOF
ClusterName=passnet-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$cl/socket/munge
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$cl/state
SlurmdSpoolDir=$cl/spool
SlurmctldPidFile=$cl/slurmctld.pid
SlurmdPidFile=$cl/slurmd.pid
SlurmctldLogFile=$cl/log/slurmctld.log
SlurmdLogFile=$cl/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF

# The munge socket first: slurmctld and slurmd authenticate through it.
tries=0
until munge -S "$cl/socket/munge" -n </dev/null 2>/dev/null | unmunge -S "$cl/socket/munge" >/dev/null 2>&1; do
	tries=$((tries + 1))
	[ "$tries" -lt 100 ] || fail "munged did not start: $(cat "$cl/log/munged.out" "$cl/log/munged.log" 2>&1)"
	sleep 0.1
done
slurmctld -D -c -f "$SLURM_CONF" >"$cl/log/slurmctld.out" 2>&1 &
daemons="$daemons $!"
slurmd -D -f "$SLURM_CONF" -N "$host" >"$cl/log/slurmd.out" 2>&1 &
daemons="$daemons $!"

cluster_logs() { tail -n 20 "$cl/log/"*.log "$cl/log/"*.out 2>&1; }
tries=0
until sinfo -h -o %T 2>/dev/null | grep -q idle; do
	tries=$((tries + 1))
	[ "$tries" -lt 300 ] || fail "the node did not come up: $(sinfo 2>&1; cluster_logs)"
	sleep 0.1
done

S="$TEST_TMP/slurm-shared"
started=$(date +%s)
script submit.sh --shards $N --shared "$S" --out "$TEST_TMP/slurm-out" --local "$TEST_TMP/slurm-node" \
	--passnet "$PASSNET" --exec --exec-opts "$exec_opts" -- $build_opts "$@"
our_jobs=$(printf '%s\n' "$out" | awk 'NF == 2 && $2 ~ /^[0-9]+$/ { print $2 }')
[ "$status" -eq 0 ] || fail "submit.sh: $out"
job_of() { printf '%s\n' "$out" | sed -n "s/^$1 //p"; }
build_job=$(job_of build)
merge_job=$(job_of merge)
ranges_job=$(job_of ranges)
merge_ranges_job=$(job_of merge-ranges)
exec_job=$(job_of exec)
final_job=$(job_of merge-profiles)
[ -n "$build_job" ] && [ -n "$merge_job" ] && [ -n "$ranges_job" ] && [ -n "$merge_ranges_job" ] &&
	[ -n "$exec_job" ] && [ -n "$final_job" ] ||
	fail "submit.sh printed no job ids: $out"

# state JOB: the job's state (of its first task, for an array).
state() { scontrol -o show job "$1" 2>/dev/null | sed -n '1s/.* JobState=\([A-Z_]*\).*/\1/p'; }
tries=0
while :; do
	st=$(state "$final_job")
	case "$st" in
	COMPLETED) break ;;
	FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE | PREEMPTED)
		fail "the last merge, job $final_job, ended $st: $(cat "$S/logs/"* 2>&1)" ;;
	esac
	# A job that failed leaves those after it pending for ever.
	for j in $merge_job $ranges_job $merge_ranges_job $exec_job $final_job; do
		scontrol -o show job "$j" 2>/dev/null | grep -q 'Reason=DependencyNeverSatisfied' &&
			fail "job $j can never start, one before it failed: $(cat "$S/logs/"* 2>&1)"
	done
	tries=$((tries + 1))
	# A guard against a hang, not a timing assertion: 10 minutes.
	[ "$tries" -lt 3000 ] || fail "the jobs did not finish: $(squeue 2>&1; cluster_logs)"
	sleep 0.2
done
elapsed=$(($(date +%s) - started))
for k in 0 1 2; do
	for j in "$build_job:build" "$ranges_job:ranges" "$exec_job:exec"; do
		expect_eq "$(state "${j%:*}_$k")" COMPLETED "${j#*:} task $k"
		[ -f "$S/logs/${j#*:}-${j%:*}_$k.out" ] || fail "no log of ${j#*:} task $k in $S/logs"
	done
done
expect_eq "$(state "$merge_job")" COMPLETED "the merge job"
expect_eq "$(state "$merge_ranges_job")" COMPLETED "the ranges merge job"
for k in 0 1 2; do
	! grep -a '^ranges:' "$S/logs/exec-${exec_job}_$k.out" || fail "Slurm's exec task $k ran models again"
done
# The shard stores Slurm left, merged by hand: the one-process build.
pn --db "$TEST_TMP/slurm-shards" merge "$S/shard-0" "$S/shard-1" "$S/shard-2"
[ "$status" -eq 0 ] || fail "merge of Slurm's shards: $out"
dump "$TEST_TMP/slurm-shards" "$TEST_TMP/slurm-shards.dump"
cmp -s "$TEST_TMP/one.dump" "$TEST_TMP/slurm-shards.dump" ||
	fail "the shards Slurm built, merged, differ from a one-process build (mdb_dump -a $TEST_TMP/one, $TEST_TMP/slurm-shards)"
# The end of the chain: the store profiled by hand above, but for what
# this node's calibration and timings measured.
dump "$TEST_TMP/slurm-out" "$TEST_TMP/slurm-out.dump"
diff=$("$PY" "$ROOT/tests/cli/store_diff.py" "$TEST_TMP/profiled.dump" "$TEST_TMP/slurm-out.dump" --apart-from-measurements) ||
	fail "the store Slurm built and profiled differs from the one built and profiled by hand: $diff"
stop_cluster
echo "slurm: build array $build_job, merge $merge_job, ranges array $ranges_job, merge $merge_ranges_job, exec array $exec_job, merge $final_job ($N tasks each) give the by-hand store (${elapsed} s)"
