#!/bin/sh
# layering.sh - every '#include "..."' of passnet's sources goes down the
# layer order of ARCHITECTURE.md, never up or sideways.
#
# The order is one list, lowest first; a folder may include its own headers
# and those of the folders before it.  Sub-folders belong to their top-level
# folder (runtime/ops is runtime).  Generated headers (build/gen: the
# protobuf-c code of schemas/*.proto and onnx.proto, the executor build id)
# belong to schemas, the layer that owns the .proto files.  tests/, bench/
# and tools/ stand outside the order: they may use every layer.
set -u
cd "${ROOT:-$(dirname "$0")/../..}"

LAYERS="common schemas model runtime canon store extract partition dedup exec export judge report cmd main mpi"

# rank NAME: the position of a layer in LAYERS (empty if it is not one).
rank() {
	i=0
	for l in $LAYERS; do
		[ "$l" = "$1" ] && { echo $i; return; }
		i=$((i + 1))
	done
}

# layer_of_header PATH: the layer an included path belongs to.
layer_of_header() {
	case "$1" in
	*.pb-c.h | onnx/* | exec_build.h) echo schemas ;;
	*/*) echo "${1%%/*}" ;;
	*) echo "" ;;
	esac
}

# list_sources: every C source, header and .def of the tree in the current
# folder (git's view in a checkout, so build products are not read).
list_sources() {
	if [ -d .git ] || [ -f .git ]; then
		git ls-files -- '*.c' '*.h' '*.def'
	else
		find . \( -name '*.[ch]' -o -name '*.def' \) -not -path './build/*' | sed 's#^\./##'
	fi
}

# check_tree DIR: prints one line per include of DIR's sources that goes
# up or sideways; sets $bad and $checked.
check_tree() {
	bad=0
	checked=0
	for f in $(cd "$1" && list_sources); do
		case "$f" in
		*/*) top=${f%%/*} ;;
		*) top=main ;;
		esac
		case "$top" in tests | bench | tools) continue ;; esac
		mine=$(rank "$top")
		if [ -z "$mine" ]; then
			echo "$f: folder '$top' is in no layer (add it to ARCHITECTURE.md and LAYERS here)"
			bad=$((bad + 1))
			continue
		fi
		# grep -n prints LINE:#include "PATH"; keep LINE and PATH.
		for hit in $(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$1/$f" |
			sed 's/^\([0-9]*\):.*"\([^"]*\)".*/\1:\2/'); do
			line=${hit%%:*}
			path=${hit#*:}
			checked=$((checked + 1))
			layer=$(layer_of_header "$path")
			# A bare name is a header beside the file: its own layer.
			[ -z "$layer" ] && continue
			theirs=$(rank "$layer")
			if [ -z "$theirs" ]; then
				echo "$f:$line: includes \"$path\", which is in no layer"
				bad=$((bad + 1))
			elif [ "$theirs" -gt "$mine" ]; then
				echo "$f:$line: $top includes \"$path\" from $layer, a layer above it"
				bad=$((bad + 1))
			fi
		done
	done
}

# 1. The checker itself: a tree with one include going up (store reaching
#    into partition), one going down and one into no layer must give
#    exactly the two bad lines, naming file and line.
tmp=${TEST_TMP:-$(mktemp -d)}/layering-selftest
mkdir -p "$tmp/store" "$tmp/partition" "$tmp/oddity"
printf '#include "common/err.h"\n\n#include "partition/partition.h"\n' >"$tmp/store/x.c"
printf '#include "store/store.h"\n' >"$tmp/partition/y.c"
printf '#include "common/err.h"\n' >"$tmp/oddity/z.c"
out=$(check_tree "$tmp")
echo "$out" | grep -q '^store/x.c:3: store includes "partition/partition.h"' ||
	{ echo "layering: self-test missed the upward include: $out"; exit 1; }
echo "$out" | grep -q "^oddity/z.c: folder 'oddity' is in no layer" ||
	{ echo "layering: self-test missed the folder outside the layers: $out"; exit 1; }
[ "$(echo "$out" | wc -l)" -eq 2 ] || { echo "layering: self-test flagged too much: $out"; exit 1; }
rm -rf "$tmp"

# 2. The real tree.
check_tree .
# The check itself must have seen the tree: a run that read nothing would
# pass whatever the includes say.
if [ "$checked" -lt 300 ]; then
	echo "layering: only $checked includes read; is this the passnet tree?"
	exit 1
fi
echo "layering: $checked includes checked, $bad going up or sideways"
[ "$bad" -eq 0 ]
