# The front door stays a front door and the docs stay in the repository:
#  1. README.md has at most 250 lines and no dated line (dated figures live
#     in docs/benchmarks.md, past ones in git history);
#  2. nothing tracked names ../shared (the team's corpus beside the checkout)
#     but the Makefile's test-corpus variable: a user's clone has no ../shared;
#  3. every relative Markdown link of README.md, ARCHITECTURE.md and docs/
#     names a file that exists.
. "$ROOT/tests/cli/lib.sh"
cd "$ROOT"
lines=$(wc -l < README.md)
[ "$lines" -le 250 ] || fail "README.md has $lines lines (at most 250)"
dated=$(grep -nE '(19|20)[0-9][0-9]-[01][0-9]-[0-3][0-9]' README.md || true)
[ -z "$dated" ] || fail "README.md has dated lines: $dated"
echo "1. README.md: $lines lines, none dated"

files=$(git ls-files 2>/dev/null || find . -type f -not -path './build/*' -not -path './.git/*')
named=$(echo "$files" | grep -v '^tests/cli/docs\.sh$' | xargs grep -n '\.\./shared' 2>/dev/null || true)
expect_eq "$named" "Makefile:$(grep -n '^SHARED ?= \.\./shared/corpus$' Makefile | cut -d: -f1):SHARED ?= ../shared/corpus" \
	"the only place naming ../shared"
echo "2. ../shared is named by the Makefile's test-corpus variable alone"

broken=0
checked=0
for md in README.md ARCHITECTURE.md docs/*.md; do
	dir=$(dirname "$md")
	# (target) of [text](target), without #anchors; URLs and pure anchors skipped
	for target in $(grep -o '\]([^)]*)' "$md" | sed 's/^](\(.*\))$/\1/; s/#.*//' |
		grep -v '^[a-z]*:' | grep -v '^$' | sort -u); do
		checked=$((checked + 1))
		[ -e "$dir/$target" ] || { echo "$md: broken link $target"; broken=$((broken + 1)); }
	done
done
[ "$checked" -ge 10 ] || fail "only $checked relative links found"
[ "$broken" -eq 0 ] || fail "$broken broken links"
echo "3. $checked relative links resolve"
