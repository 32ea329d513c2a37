# tests/copy-libev-tests.mk: build and test lists (included by Makefile.am).
#
# The shell tests of examples/copy-libev, one behaviour each.  They start
# their own nbdkit and qemu-nbd servers; see tests/functions.sh.
# (tests/copy-pattern.sh is listed in Makefile.am itself.)

TESTS_SH += \
	tests/copy-sparse-random.sh \
	tests/copy-odd-sizes.sh \
	tests/copy-zero-size.sh \
	tests/copy-larger-destination.sh \
	tests/copy-requests-1.sh \
	tests/copy-request-size.sh \
	tests/copy-init.sh \
	tests/copy-flush.sh \
	tests/copy-qemu-nbd.sh \
	tests/copy-tcp.sh \
	tests/copy-small-destination.sh \
	tests/copy-bad-uri.sh \
	tests/copy-bad-options.sh \
	tests/copy-read-error.sh \
	tests/copy-write-error.sh \
	tests/copy-write-error-offset.sh \
	tests/copy-flush-error.sh \
	tests/copy-help.sh \
	tests/copy-unaligned-size.sh \
	$(NULL)
