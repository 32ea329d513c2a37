# examples/copy-libev.mk: build and test lists (included by Makefile.am).

bin_PROGRAMS += examples/copy-libev

examples_copy_libev_SOURCES = \
	examples/copy-libev.c \
	$(COMMON_CONN) \
	$(COMMON_CONNECT) \
	$(COMMON_CONNS) \
	$(COMMON_FLUSH) \
	$(COMMON_IMAGE) \
	$(COMMON_OPTIONS) \
	$(COMMON_RING) \
	$(COMMON_STOP) \
	$(COMMON_UTIL) \
	$(NULL)
examples_copy_libev_CFLAGS = \
	$(WARNINGS_CFLAGS) \
	$(LIBNBD_CFLAGS) \
	$(LIBEV_CFLAGS) \
	$(NULL)
examples_copy_libev_LDADD = \
	$(LIBNBD_LIBS) \
	$(LIBEV_LIBS) \
	$(NULL)

# One behaviour each.  They start their own nbdkit and qemu-nbd servers;
# see tests/functions.sh.
TESTS_SH += \
	tests/copy-pattern.sh \
	tests/copy-socket-buffer.sh \
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
	tests/copy-destination-dies.sh \
	tests/copy-bad-options.sh \
	tests/copy-read-error.sh \
	tests/copy-write-error.sh \
	tests/copy-write-error-offset.sh \
	tests/copy-flush-error.sh \
	tests/copy-help.sh \
	tests/copy-unaligned-size.sh \
	$(NULL)
