#!/usr/bin/env bash
# Each tool's man page (written at build time by scripts/help-to-man, cmake/Install.cmake) carries
# what its --help says: the NAME from the summary, every usage line in SYNOPSIS, every flag the
# Flags table lists under OPTIONS, every exit code under EXIT STATUS; and it renders: through
# `man -l` and groff with warnings on (none allowed) where they are installed, else by its roff
# structure alone.
#   man_pages.sh BIN_DIR MAN_DIR
. "$(dirname "$0")/lib.sh"
bin=$1 man=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# The text of the section titled $2 in the rendered page $1 (up to the next unindented line).
section() { awk -v s="$2" '/^[^ ]/ { on = ($0 == s) ; next } on' "$1"; }
squeeze() { tr -s ' \n' '  ' | sed 's/^ //; s/ $//'; }
have_word() { grep -qE -- "(^|[^-[:alnum:]])$2([^-[:alnum:]]|\$)" <<< "$1"; }

expect_eq "the eight tools are built" "$(cd "$bin" && ls -d kubectl-ichor* | LC_ALL=C sort | tr '\n' ' ')" "$ICHOR_TOOLS "
for name in $ICHOR_TOOLS; do
  page=$man/$name.1
  if [ ! -s "$page" ]; then fail "$name: no man page $page"; continue; fi
  NO_COLOR=1 "$bin/$name" --help > "$tmp/help" 2>&1
  # Rendered text, plain (no overstrike, hyphens as typed). ICHOR_MAN_RENDER=source takes the
  # path of a machine without groff.
  if command -v groff > /dev/null && [ "${ICHOR_MAN_RENDER:-}" != source ]; then
    groff -man -Tascii -ww -rLL=200n "$page" 2> "$tmp/warnings" | sed 's/.\x08//g' > "$tmp/text"
    expect_eq "$name: groff renders it without a warning" "$(cat "$tmp/warnings")" ""
  else
    # Without a formatter: the structure man(7) needs, read from the source; headings at the
    # margin, text indented, as a formatter would lay them out.
    expect_eq "$name: .TH first" "$(grep -v '^\.\\"' "$page" | head -1 | cut -c1-5)" '.TH "'
    awk '/^\.\\"/ { next }
         /^\.SH / { sub(/^\.SH "?/, ""); sub(/"$/, ""); print; next }
         /^\.SS / { sub(/^\.SS "?/, ""); sub(/"$/, ""); print "   " $0; next }
         /^\.TP/ { tp = 1; next }
         /^\.B / { sub(/^\.B /, "") }
         /^\.BR / { sub(/^\.BR /, ""); gsub(/ /, "") }
         /^\./ { next }
         tp == 1 { tag = $0; tp = 2; next }
         tp == 2 { print "       " tag "   " $0; tp = 0; next }
         { print "       " $0 }' "$page" \
      | sed -e 's/\\-/-/g; s/\\f[BIRP]//g; s/\\e/\\/g; s/\\&//g' > "$tmp/text"
  fi
  if command -v man > /dev/null; then
    MANWIDTH=200 man -l "$page" > "$tmp/man" 2> "$tmp/man.err"
    expect_eq "$name: man -l renders it" "$? $(grep -c 'EXIT STATUS' "$tmp/man")" "0 1"
  fi
  headings=$(grep -E '^[A-Z][A-Z ]+$' "$tmp/text" | tr '\n' ',')
  want=NAME,SYNOPSIS,DESCRIPTION,
  grep -q '^Examples:$' "$tmp/help" && want+=EXAMPLES,
  grep -q '^Flags:$' "$tmp/help" && want+=OPTIONS,
  grep -q '^Verbs:$' "$tmp/help" && want+=COMMANDS,
  want+="EXIT STATUS,SEE ALSO,"
  expect_eq "$name: sections" "$headings" "$want"
  expect_eq "$name: NAME is the summary" "$(section "$tmp/text" NAME | squeeze)" "$name - $(head -1 "$tmp/help" | sed 's/\.$//')"

  # SYNOPSIS: each usage of the help (continuation lines joined), word for word.
  synopsis=$(section "$tmp/text" SYNOPSIS | squeeze)
  n=0
  while IFS= read -r usage || [ -n "$usage" ]; do
    n=$((n + 1))
    expect_contains "$name: usage $n in SYNOPSIS" "$synopsis" "$usage"
  done < <(sed -n '/^Usage:$/,/^$/p' "$tmp/help" | sed '1d;$d' | awk '/^  [^ ]/ { if (u) print u; u = $0; next } { u = u " " $0 } END { print u }' | squeeze | sed 's/ kubectl ichor/\nkubectl ichor/g')
  [ "$n" -gt 0 ] || fail "$name: no usage line read from --help"

  # OPTIONS: every flag of the Flags table (the column before the descriptions).
  options=$(section "$tmp/text" OPTIONS)
  flags=$(sed -n '/^Flags:$/,/^[A-Z][a-z ]*:$/p' "$tmp/help" | grep -E '^ {1,8}-' | sed -E 's/^ +//; s/  .*//' \
            | grep -oE -- '(^|[ ,])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[ ,]*//')
  count=0
  for f in $flags; do
    count=$((count + 1))
    have_word "$options" "$f" || fail "$name: flag $f missing from OPTIONS"
  done
  if grep -q '^Flags:$' "$tmp/help"; then
    [ "$count" -ge 2 ] && pass "$name: all $count flags under OPTIONS" || fail "$name: only $count flags read from --help"
  fi

  # EXIT STATUS: every code of the help's table.
  status=$(section "$tmp/text" "EXIT STATUS")
  codes=$(sed -n '/^Exit status:$/,/^$/p' "$tmp/help" | sed -n 's/^  \([0-9][0-9]*\) .*/\1/p' | tr '\n' ' ')
  got=$(for c in $codes; do grep -qE "^ +$c +[a-z]" <<< "$status" && printf '%s ' "$c"; done)
  expect_eq "$name: exit codes under EXIT STATUS" "$got" "$codes"
done
finish
