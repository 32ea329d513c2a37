# examples/zero-extent-copy-libev.mk: build and test lists (included by Makefile.am).

bin_PROGRAMS += examples/zero-extent-copy-libev

examples_zero_extent_copy_libev_SOURCES = \
	examples/zero-extent-copy-libev.c \
	$(COMMON_CONN) \
	$(COMMON_CONNECT) \
	$(COMMON_CONNS) \
	$(COMMON_EXTENTS) \
	$(COMMON_FLUSH) \
	$(COMMON_OPTIONS) \
	$(COMMON_RING) \
	$(COMMON_STOP) \
	$(COMMON_UTIL) \
	$(NULL)
examples_zero_extent_copy_libev_CFLAGS = \
	$(WARNINGS_CFLAGS) \
	$(LIBNBD_CFLAGS) \
	$(LIBEV_CFLAGS) \
	$(NULL)
examples_zero_extent_copy_libev_LDADD = \
	$(LIBNBD_LIBS) \
	$(LIBEV_LIBS) \
	$(NULL)

TESTS_SH += \
	tests/zero-log.sh \
	tests/zero-allocation.sh \
	tests/zero-sparse-random.sh \
	tests/zero-qcow2.sh \
	tests/zero-fallbacks.sh \
	tests/zero-sizes.sh \
	tests/zero-errors.sh \
	$(NULL)

EXTRA_DIST += \
	tests/zero-functions.sh \
	$(NULL)
