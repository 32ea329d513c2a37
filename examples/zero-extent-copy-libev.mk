# examples/zero-extent-copy-libev.mk: build and test lists (included by Makefile.am).

bin_PROGRAMS += examples/zero-extent-copy-libev

examples_zero_extent_copy_libev_SOURCES = \
	examples/zero-extent-copy-libev.c \
	$(COMMON_BLKHASH) \
	$(COMMON_CONN) \
	$(COMMON_CONNECT) \
	$(COMMON_CONNS) \
	$(COMMON_EXTENTS) \
	$(COMMON_FLUSH) \
	$(COMMON_IMAGE) \
	$(COMMON_OPTIONS) \
	$(COMMON_POOL) \
	$(COMMON_RING) \
	$(COMMON_SLOTHASH) \
	$(COMMON_STOP) \
	$(COMMON_UTIL) \
	$(NULL)
# -pthread and libcrypto: --checksum hashes on a pool of threads.
examples_zero_extent_copy_libev_CFLAGS = \
	$(WARNINGS_CFLAGS) \
	-pthread \
	$(LIBNBD_CFLAGS) \
	$(LIBEV_CFLAGS) \
	$(LIBCRYPTO_CFLAGS) \
	$(NULL)
examples_zero_extent_copy_libev_LDFLAGS = -pthread
examples_zero_extent_copy_libev_LDADD = \
	$(LIBNBD_LIBS) \
	$(LIBEV_LIBS) \
	$(LIBCRYPTO_LIBS) \
	$(NULL)

TESTS_SH += \
	tests/zero-log.sh \
	tests/zero-allocation.sh \
	tests/zero-sparse-random.sh \
	tests/zero-qcow2.sh \
	tests/zero-fallbacks.sh \
	tests/zero-sizes.sh \
	tests/zero-errors.sh \
	tests/zero-checksum.sh \
	tests/zero-verify.sh \
	$(NULL)

EXTRA_DIST += \
	tests/zero-functions.sh \
	$(NULL)
