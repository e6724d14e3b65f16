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
#
# Includes are not the only tie: a layer can name a function of a higher one
# without its header (an extern declaration, a weak symbol that is NULL when
# the other layer is not linked).  So the objects `make` built (build/obj)
# are read too: every symbol an object leaves undefined (nm -u, weak ones
# included) and another passnet object defines must be defined in the same
# layer or a lower one.
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

# list_objects DIR: "LAYER OBJECT" for every object under DIR/build/obj
# whose source is still in DIR (an object left behind by a moved or deleted
# source is not passnet any more).  Objects of build/gen (the protobuf-c
# code) belong to schemas, passnet.o to main.
list_objects() {
	find "$1/build/obj" -name '*.o' | sed "s#^$1/build/obj/##" | sort | while read -r o; do
		case "$o" in
		gen/*) src=$1/build/gen/${o#gen/} layer=schemas ;;
		*/*) src=$1/$o layer=${o%%/*} ;;
		*) src=$1/$o layer=main ;;
		esac
		[ -f "${src%.o}.c" ] && echo "$layer $o"
	done
}

# symbol_table DIR: "D SYMBOL OBJECT LAYER" for each symbol an object
# defines, "U SYMBOL OBJECT LAYER" for each it leaves undefined (U, and the
# weak w and v), definitions first.
symbol_table() {
	list_objects "$1" | while read -r layer o; do
		nm --defined-only -g "$1/build/obj/$o" |
			awk -v o="$o" -v l="$layer" 'NF == 3 { print "D", $3, o, l }'
		nm -u "$1/build/obj/$o" | awk -v o="$o" -v l="$layer" '{ print "U", $NF, o, l }'
	done | sort -k1,1 -s
}

# check_symbols DIR: prints one line per undefined symbol of DIR's objects
# that an object of a higher layer defines, and a last line "checked N"
# (the references to another passnet object that were looked at).
check_symbols() {
	symbol_table "$1" | awk -v layers="$LAYERS" '
	BEGIN { n = split(layers, l, " "); for (i = 1; i <= n; i++) rank[l[i]] = i }
	$1 == "D" { if (!($2 in def)) { def[$2] = $3; deflayer[$2] = $4 }; next }
	!($2 in def) || def[$2] == $3 { next }
	{
		checked++
		if (!($4 in rank))
			printf "%s: folder \047%s\047 is in no layer\n", $3, $4
		else if (rank[deflayer[$2]] > rank[$4])
			printf "%s: uses %s, defined in %s (%s), a layer above %s\n", $3, $2, def[$2],
				deflayer[$2], $4
	}
	END { print "checked " checked + 0 }'
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

# 1b. The symbol check on objects built here: store calls partition's
#     sym_up and, through a weak reference, sym_weak_up (two ties upward);
#     store and partition call store's sym_down (down and within a layer);
#     store calls strlen (no passnet object's); and a stale object in
#     common/ whose source is gone would tie upward too if it were read.
#     Exactly the two upward lines must come out, naming object and symbol.
tmp=${TEST_TMP:-$(mktemp -d)}/layering-symbols
mkdir -p "$tmp/store" "$tmp/partition" "$tmp/build/obj/store" "$tmp/build/obj/partition" \
	"$tmp/build/obj/common"
cat >"$tmp/store/x.c" <<'EOC'
#include <string.h>
int sym_up(void);
extern int sym_weak_up(void) __attribute__((weak));
int sym_down(void);
int sym_x(const char *s) { return sym_up() + (sym_weak_up ? sym_weak_up() : 0) + sym_down() + (int)strlen(s); }
EOC
printf 'int sym_down(void) { return 1; }\n' >"$tmp/store/down.c"
printf 'int sym_down(void);\nint sym_up(void) { return sym_down(); }\nint sym_weak_up(void) { return 2; }\n' \
	>"$tmp/partition/y.c"
for f in store/x store/down partition/y; do
	${CC:-cc} -c -o "$tmp/build/obj/$f.o" "$tmp/$f.c" ||
		{ echo "layering: self-test: cannot compile $f.c"; exit 1; }
done
cp "$tmp/build/obj/store/x.o" "$tmp/build/obj/common/stale.o"
out=$(check_symbols "$tmp")
echo "$out" | grep -q '^store/x.o: uses sym_up, defined in partition/y.o (partition), a layer above store$' ||
	{ echo "layering: self-test missed the upward call: $out"; exit 1; }
echo "$out" | grep -q '^store/x.o: uses sym_weak_up, defined in partition/y.o' ||
	{ echo "layering: self-test missed the upward weak reference: $out"; exit 1; }
[ "$(echo "$out" | wc -l)" -eq 3 ] && [ "$(echo "$out" | tail -n 1)" = "checked 4" ] ||
	{ echo "layering: self-test of the symbol check flagged too much or read too little: $out"; exit 1; }
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

# 3. The real tree's objects.  The tests run after `make all`; a tree
#    without objects (a fresh clone run by hand) is built first.
if [ -z "$(find build/obj -name '*.o' 2>/dev/null | head -n 1)" ]; then
	make --no-print-directory -s all >/dev/null || { echo "layering: make all failed"; exit 1; }
fi
out=$(check_symbols "$PWD")
sym_checked=$(echo "$out" | tail -n 1 | sed 's/^checked //')
sym_bad=$(echo "$out" | sed '$d')
[ -n "$sym_bad" ] && echo "$sym_bad"
# As for includes: a run that saw no objects would pass whatever they say.
if [ "$sym_checked" -lt 1000 ]; then
	echo "layering: only $sym_checked references between objects read; was passnet built (make all)?"
	exit 1
fi
n_sym_bad=$(echo "$sym_bad" | grep -c . || true)
echo "layering: $sym_checked references between objects checked, $n_sym_bad to a layer above"
[ "$bad" -eq 0 ] && [ "$n_sym_bad" -eq 0 ]
