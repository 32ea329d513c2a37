#!/usr/bin/env bash
# common/glue.c notifies libnbd of one event per wake-up, read before
# write, so a socket reported readable and writable at once does not
# make the write notification fail (see tests/conn-both-events.c).
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit

start_nbdkit src pattern 1M
conn-both-events "$src"
