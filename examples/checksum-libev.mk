# examples/checksum-libev.mk: build and test lists (included by Makefile.am).
