#!/usr/bin/env bash
# Every lesson in examples/ builds alone with the cc command in its
# header comment, from a copy of the files that command names and
# nothing else (so no tools/ header can creep in); that command names
# the same common/*.c files as the program's _SOURCES in
# examples/NAME.mk; only checksum-libev, the lesson that hashes, links
# libcrypto.  And no common/ module includes a header from tools/.
# A reader who copies one lesson and its modules gets a program that
# builds, and the two build descriptions cannot drift apart.
source "$abs_top_srcdir/tests/functions.sh"
requires cc

# Either tool lists a binary's NEEDED entries; skip only with neither.
if command -v readelf >/dev/null 2>&1; then
  dynamic="readelf -d"
elif command -v objdump >/dev/null 2>&1; then
  dynamic="objdump -p"
else
  echo "$0: SKIP: neither readelf nor objdump is installed"
  exit 77
fi

# cc_line FILE: the header's cc command on one line, without the
# comment's " * " margins and the trailing backslashes.
cc_line ()
{
  awk '
    /^ \*   cc / { on = 1 }
    on {
      line = $0
      sub(/^ \*[ ]*/, "", line)
      more = sub(/[ ]*\\$/, "", line)
      printf "%s ", line
      if (!more) exit
    }
  ' "$1"
}

# mk_sources VAR FILE...: the common/*.c files in automake variable VAR
# as FILE... define it, with $(NAME) references (the COMMON_* module
# variables of Makefile.am) expanded.
mk_sources ()
{
  awk -v want="$1" '
    function expand(name, depth,   n, w, i)
    {
      if (depth > 10)
        return
      n = split(def[name], w, /[ \t]+/)
      for (i = 1; i <= n; i++) {
        if (w[i] ~ /^\$\([A-Za-z0-9_]+\)$/)
          expand(substr(w[i], 3, length(w[i]) - 3), depth + 1)
        else if (w[i] ~ /^common\/.*\.c$/)
          print w[i]
      }
    }
    # Join continued lines, then record NAME = ... and NAME += ...
    { line = line $0 }
    /\\$/ { sub(/\\$/, " ", line); next }
    {
      if (line ~ /^[A-Za-z0-9_]+[ \t]*\+?=/) {
        name = line
        sub(/[ \t]*\+?=.*/, "", name)
        val = line
        sub(/^[^=]*=/, "", val)
        def[name] = (line ~ /^[^=]*\+=/ ? def[name] " " : "") val
      }
      line = ""
    }
    END { expand(want, 0) }
  ' "${@:2}"
}

# The cc lines name files relative to the repository root.  Only the
# output is redirected, into $tmpdir: the source tree may be read-only
# (make distcheck).
cd "$abs_top_srcdir"

# The technique modules stand alone: each includes only system headers
# and other common/ headers.
for f in common/*.[ch]; do
  for h in $(sed -n 's/^#include "\(.*\)"$/\1/p' "$f"); do
    [ -f "common/$h" ] || fail "$f includes \"$h\", which is not in common/"
  done
done

built=0
for src in examples/*.c; do
  name=$(basename "$src" .c)
  line=$(cc_line "$src")
  line=${line% }
  [ -n "$line" ] || fail "$src: no ' *   cc ' line in its header comment"

  read -ra words <<<"$line"
  cmd=()
  out=
  : >"$tmpdir/$name.cc-sources"
  for ((i = 0; i < ${#words[@]}; i++)); do
    w=${words[$i]}
    case $w in
      common/*.c) echo "$w" >>"$tmpdir/$name.cc-sources" ;;
    esac
    if [ "$w" = -o ] && [ $((i + 1)) -lt ${#words[@]} ]; then
      i=$((i + 1))
      out="$tmpdir/$(basename "${words[$i]}")"
      cmd+=(-o "$out")
    else
      cmd+=("$w")
    fi
  done
  [ -n "$out" ] || fail "$src: the cc line has no -o: $line"

  # (a) The command as printed, output aside, builds the program, in
  # a directory holding only the files it names and common/'s headers.
  alone="$tmpdir/$name.alone"
  mkdir -p "$alone/examples" "$alone/common"
  cp "$src" "$alone/examples/"
  cp common/*.h "$alone/common/"
  for w in "${words[@]}"; do
    case $w in common/*.c) cp "$w" "$alone/common/" ;; esac
  done
  if ! (cd "$alone" && "${cmd[@]}") 2>"$tmpdir/$name.err"; then
    cat "$tmpdir/$name.err" >&2
    fail "$src: its header's cc command failed: $line"
  fi

  # (b) The same common/ modules as automake builds it from.  automake
  # names the variable after the program's path, with - and / as _.
  mk="examples/$name.mk"
  var="examples_${name//-/_}_SOURCES"
  [ -f "$mk" ] || fail "$src: no $mk"
  mk_sources "$var" Makefile.am "$mk" | sort >"$tmpdir/$name.mk-sources"
  [ -s "$tmpdir/$name.mk-sources" ] ||
    fail "$mk: no common/*.c in $var"
  sort -o "$tmpdir/$name.cc-sources" "$tmpdir/$name.cc-sources"
  if ! diff -u "$tmpdir/$name.cc-sources" "$tmpdir/$name.mk-sources" >&2; then
    fail "$src: its cc line (-) and $var in $mk (+) list different common/*.c files"
  fi

  # (c) Only the lesson that hashes may need libcrypto: the copiers
  # must not pull it in.
  case $name in
    checksum-libev) hashes=yes ;;
    *) hashes=no ;;
  esac
  $dynamic "$out" >"$tmpdir/$name.dynamic" ||
    fail "$dynamic $out failed"
  if grep -q 'NEEDED.*libcrypto' "$tmpdir/$name.dynamic"; then
    [ $hashes = yes ] ||
      fail "$name links libcrypto, which only the hashing programs need"
  else
    [ $hashes = no ] ||
      fail "$name built from its cc line does not link libcrypto"
  fi
  echo "ok: $name: $line"
  built=$((built + 1))
done
[ "$built" -gt 0 ] || fail "no example was checked"
