# bench/bench.mk: make bench (included by Makefile.am).
