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

LAYERS="common schemas model runtime canon store extract partition dedup exec export cmd main"

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

bad=0
checked=0
# Every C source and header of the layers (git's view when in a checkout,
# else the tree), with the line of each quoted include.
list_sources() {
	if git rev-parse --git-dir >/dev/null 2>&1; then
		git ls-files -- '*.c' '*.h' '*.def'
	else
		find . -name '*.[ch]' -o -name '*.def' | sed 's#^\./##'
	fi
}
for f in $(list_sources); do
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
	for hit in $(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
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

# The check itself must have seen the tree: a run that read nothing would
# pass whatever the includes say.
if [ "$checked" -lt 300 ]; then
	echo "layering: only $checked includes read; is this the passnet tree?"
	exit 1
fi
echo "layering: $checked includes checked, $bad going up or sideways"
[ "$bad" -eq 0 ]
