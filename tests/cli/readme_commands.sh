# README's `## Commands` table is the one `passnet help --markdown` makes
# from the commands' option tables (cmd/*.c): a command whose options,
# arguments or description changed without README following fails here,
# named.  The global synopsis above the table is `passnet --help`'s usage.
. "$ROOT/tests/cli/lib.sh"
readme="$ROOT/README.md"

pn help --markdown
[ "$status" -eq 0 ] || fail "help --markdown: $out"
printf '%s\n' "$out" >"$TEST_TMP/generated"
# The table: the lines starting with '|' of the Commands section.
awk '/^## Commands/ { on = 1; next } /^## / { on = 0 } on && /^\|/' "$readme" >"$TEST_TMP/readme"
[ -s "$TEST_TMP/readme" ] || fail "README.md has no command table under ## Commands"
[ "$(wc -l <"$TEST_TMP/generated")" -gt 2 ] || fail "help --markdown printed no rows: $out"

# name ROW: the command a table row is about (first word of its synopsis).
name() { printf '%s\n' "$1" | sed -n 's/^| `\([a-z-]*\).*/\1/p'; }

bad=0
while IFS= read -r row; do
	cmd=$(name "$row")
	[ -n "$cmd" ] || continue
	theirs=$(while IFS= read -r r; do
		if [ "$(name "$r")" = "$cmd" ]; then printf '%s\n' "$r"; fi
	done <"$TEST_TMP/readme")
	if [ -z "$theirs" ]; then
		echo "README.md: command '$cmd' is missing from the table; its row is:"
		printf '  %s\n' "$row"
		bad=$((bad + 1))
	elif [ "$theirs" != "$row" ]; then
		echo "README.md: the row of '$cmd' differs from \`passnet help --markdown\`:"
		printf '  README:    %s\n  generated: %s\n' "$theirs" "$row"
		bad=$((bad + 1))
	fi
done <"$TEST_TMP/generated"
while IFS= read -r r; do
	cmd=$(name "$r")
	[ -n "$cmd" ] || continue
	grep -q "^| \`$cmd[ \`]" "$TEST_TMP/generated" ||
		{ echo "README.md: '$cmd' is in the table but is no command"; bad=$((bad + 1)); }
done <"$TEST_TMP/readme"
# Header, order and nothing else: the whole table, line for line.
if [ "$bad" -eq 0 ] && ! cmp -s "$TEST_TMP/readme" "$TEST_TMP/generated"; then
	echo "README.md: the command table's header or row order differs from \`passnet help --markdown\`"
	diff "$TEST_TMP/readme" "$TEST_TMP/generated" || true
	bad=$((bad + 1))
fi
[ "$bad" -eq 0 ] || fail "$bad differences; replace the table with \`bin/passnet help --markdown\`"

# The synopsis above the table.
synopsis=$("$PASSNET" --help | sed -n '1s/^usage: //p')
grep -qxF "    $synopsis" "$readme" || fail "README.md lacks the synopsis '    $synopsis'"

# Every command of `passnet --help` has a row, and every row a --help.
for cmd in $("$PASSNET" --help | awk '/^commands:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }'); do
	grep -q "^| \`$cmd[ \`]" "$TEST_TMP/generated" || fail "'$cmd' of passnet --help has no row"
	pn "$cmd" --help
	[ "$status" -eq 0 ] || fail "$cmd --help exited $status"
	expect_contains "$out" "usage: passnet $cmd" "$cmd --help"
done
echo "readme_commands: README's command table is the generated one"
