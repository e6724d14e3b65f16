#!/bin/sh
# submit.sh - submits the passnet recipe for Slurm (see README.md): a job
# array of N shard builds, each copied to SHARED/shard-K, then a merge job
# (afterok on the whole array) into OUT; with --exec also an array of N
# ranges shards on copies of OUT (each runs its shard's models once) and
# their merge, then an array of N exec shards on copies of OUT, and a merge
# of their profiles.
# Prints the job ids, one a line: "build ID", "merge ID", ...
set -eu

usage() {
	cat >&2 <<'EOF'
usage: submit.sh --shards N --shared DIR --out OUT [--local DIR] [--passnet PATH]
                 [--exec [--exec-opts "OPTS"]] [--sbatch-opts "OPTS"] [--dry-run]
                 [--manifest FILE] [--] [BUILD-OPTION...] [SOURCE...]
  N          shards, one array task each (tasks 0..N-1)
  DIR        shared storage the shard stores are copied to (DIR/shard-K,
             DIR/profile-K) and the job logs written to (DIR/logs)
  OUT        the merged store
  --local    node-local scratch for the stores being written (default: the
             job's $TMPDIR, else /tmp)
  --passnet  the passnet binary on the nodes (default $PASSNET, else passnet)
  --exec     then profile: `exec --ranges-only --shard K/N`, then `exec --shard
             K/N`, each on copies of OUT and merged into OUT
  --exec-opts, --sbatch-opts  words added to each exec / each sbatch command
  --dry-run  print the sbatch commands instead of submitting them
  after the options (or after --): what `passnet build` takes, sources and
  build options; at least one source or --manifest
EOF
	exit 2
}

bad() {
	echo "submit.sh: $*" >&2
	usage
}

is_count() {
	case "$1" in '' | *[!0-9]* | 0*) return 1 ;; esac
}

# absolute PATH: PATH from / (the jobs may start in another folder).
absolute() {
	case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac
}

here=$(cd "$(dirname "$0")" && pwd)
shards="" shared="" out="" local_dir="" passnet="${PASSNET:-passnet}"
exec_phase=0 exec_opts="" sbatch_opts="" dry=0 manifest=""
while [ $# -gt 0 ]; do
	case "$1" in
	--shards | --shared | --out | --local | --passnet | --exec-opts | --sbatch-opts | --manifest)
		[ $# -ge 2 ] || bad "$1 needs a value"
		case "$1" in
		--shards) shards=$2 ;;
		--shared) shared=$(absolute "$2") ;;
		--out) out=$(absolute "$2") ;;
		--local) local_dir=$2 ;;
		--passnet) passnet=$2 ;;
		--exec-opts) exec_opts=$2 ;;
		--sbatch-opts) sbatch_opts=$2 ;;
		--manifest) manifest=$(absolute "$2") ;;
		esac
		shift 2
		;;
	--exec) exec_phase=1 && shift ;;
	--dry-run) dry=1 && shift ;;
	-h | --help) usage ;;
	--) shift && break ;;
	-*) bad "unknown option '$1' (build options go after --)" ;;
	*) break ;;
	esac
done
[ -n "$shards" ] || bad "--shards N is required"
is_count "$shards" || bad "--shards '$shards': not a positive integer"
[ -n "$shared" ] || bad "--shared DIR is required"
[ -n "$out" ] || bad "--out OUT is required"
[ $# -gt 0 ] || [ -n "$manifest" ] || bad "no sources: give paths or --manifest FILE"
[ -z "$manifest" ] || [ -f "$manifest" ] || bad "--manifest $manifest: no such file"
[ -n "$exec_opts" ] && [ "$exec_phase" = 0 ] && bad "--exec-opts without --exec"
case "$passnet" in */*) passnet=$(absolute "$passnet") ;; esac
# The paths are passed to the jobs as words of one list.
for p in "$shared" "$out" "$passnet" "$local_dir"; do
	case "$p" in *[[:space:]]*) bad "'$p': paths with blanks are not supported" ;; esac
done
calibrate=$([ "$exec_phase" = 0 ] || echo --calibrate)
if [ -n "$manifest" ]; then set -- --manifest "$manifest" "$@"; fi

common="--shards $shards --shared $shared --passnet $passnet${local_dir:+ --local $local_dir}"
logs="$shared/logs"
last=$((shards - 1))

# submit [SBATCH-OPTION...] SCRIPT [ARG...]: sbatch, printing the job id; a
# dry run prints the command, and names the job by the script's name.
submit() {
	if [ "$dry" = 1 ]; then
		echo "sbatch $*" >&2
		echo "JOB$count"
		return
	fi
	id=$(sbatch --parsable "$@") || { echo "submit.sh: sbatch failed: sbatch $*" >&2; exit 1; }
	echo "${id%%;*}"
}

# stage NAME SBATCH-ARG...: submits the next job of the chain, prints
# "NAME ID" and leaves ID in $job for the next job's dependency.
count=0
stage() {
	name=$1
	shift
	count=$((count + 1))
	job=$(submit "$@")
	echo "$name $job"
}

[ "$dry" = 1 ] || mkdir -p "$logs" || { echo "submit.sh: cannot create $logs" >&2; exit 1; }
# shellcheck disable=SC2086 # $sbatch_opts and $common are lists of words
stage build $sbatch_opts --array="0-$last" -o "$logs/build-%A_%a.out" \
	"$here/passnet-shard.sbatch" $common build "$@"
# shellcheck disable=SC2086
stage merge $sbatch_opts --dependency="afterok:$job" -o "$logs/merge-%j.out" \
	"$here/passnet-merge.sbatch" $common --out "$out" $calibrate
[ "$exec_phase" = 1 ] || exit 0
# First the ranges phase (every model run once) in shards of its own, so
# that no exec task runs every model: merged, OUT holds every model's
# ranges.  Then the profiles.  Each array works on copies of OUT.
for phase in ranges:ranges:merge-ranges exec:profile:merge-profiles; do
	mode=${phase%%:*} rest=${phase#*:}
	# shellcheck disable=SC2086
	stage "$mode" $sbatch_opts --array="0-$last" --dependency="afterok:$job" \
		-o "$logs/$mode-%A_%a.out" "$here/passnet-shard.sbatch" $common "$mode" --from "$out" $exec_opts
	# shellcheck disable=SC2086
	stage "${rest#*:}" $sbatch_opts --dependency="afterok:$job" -o "$logs/${rest#*:}-%j.out" \
		"$here/passnet-merge.sbatch" $common --out "$out" --prefix "${rest%%:*}"
done
