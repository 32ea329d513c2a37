#!/usr/bin/env python3
# screen.py FILE: print what a terminal would show after the bytes in
# FILE, a transcript written by script(1): a carriage return moves to
# the start of the line and later characters overwrite earlier ones, so
# a progress bar redrawn in place leaves only what its last frame and
# anything after it wrote.  Trailing spaces are dropped from each line.
import sys

lines = []
for raw in open(sys.argv[1], 'rb').read().decode('utf-8', 'replace').split('\n'):
    cells = []
    col = 0
    for ch in raw:
        if ch == '\r':
            col = 0
            continue
        if col < len(cells):
            cells[col] = ch
        else:
            cells.append(ch)
        col += 1
    lines.append(''.join(cells).rstrip())
while lines and lines[-1] == '':
    lines.pop()
print('\n'.join(lines))
