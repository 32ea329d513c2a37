# tests/copy-libev-tests.mk: build and test lists (included by Makefile.am).
