# examples/zero-extent-copy-libev.mk: build and test lists (included by Makefile.am).
