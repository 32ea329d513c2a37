# tests/copy-libev-tests.mk: build and test lists (included by Makefile.am).
#
# The shell tests of examples/copy-libev, one behaviour each.  They start
# their own nbdkit and qemu-nbd servers; see tests/functions.sh.

TESTS_SH += \
	tests/copy-sparse-random.sh \
	tests/copy-odd-sizes.sh \
	tests/copy-zero-size.sh \
	tests/copy-requests-1.sh \
	tests/copy-request-size.sh \
	tests/copy-init.sh \
	tests/copy-flush.sh \
	$(NULL)
