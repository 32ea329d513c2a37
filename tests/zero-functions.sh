# Helpers for the tests of nbd-evcopy's extents and zeroes (zero-*.sh),
# sourced after tests/functions.sh.

# log_commands LOGFILE: the writes, zeroes and trims that nbdkit's log
# filter recorded, one "Write|Zero|Trim OFFSET COUNT [trim=0|1]" line
# each in decimal, sorted by offset.  Comparing this with an exact list
# proves which commands went out, not just that the result is right.
log_commands ()
{
  grep -E ' (Write|Zero|Trim) id=' "$1" |
    while read -r _date _time _conn cmd _id off count rest; do
      line="$cmd $((${off#offset=})) $((${count#count=}))"
      case "$cmd" in
        Zero) line="$line ${rest%% *}" ;;
      esac
      echo "$line"
    done |
    sort -k2,2n -k1,1
}

# expect_commands LOGFILE EXPECTED: log_commands must print EXPECTED.
expect_commands ()
{
  if ! diff -u <(printf '%s\n' "$2") <(log_commands "$1"); then
    fail "unexpected commands in $1"
  fi
}

# zero_copy_summary: the counts that nbd-evcopy -v prints
# at the end, from the stderr it left in $tmpdir/stderr.
zero_copy_summary ()
{
  sed -n 's/.*done: //p' "$tmpdir/stderr"
}
