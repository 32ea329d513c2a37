# examples/checksum-libev.mk: build and test lists (included by Makefile.am).
# A lesson: built, not installed.  Its _SOURCES name the same common/
# modules as the cc line in its header comment (tests/build-alone.sh).

noinst_PROGRAMS += examples/checksum-libev

examples_checksum_libev_SOURCES = \
	examples/checksum-libev.c \
	$(COMMON_BLKHASH) \
	$(COMMON_EXTENTS) \
	$(COMMON_GLUE) \
	$(COMMON_ISZERO) \
	$(COMMON_POOL) \
	$(COMMON_RING) \
	$(NULL)
# -pthread and libcrypto: the block digests are computed on a pool of
# hash threads with OpenSSL.
examples_checksum_libev_CFLAGS = $(WARNINGS_CFLAGS) $(SANITIZER_CFLAGS) -pthread $(LIBCRYPTO_CFLAGS) $(LIBNBD_CFLAGS) $(LIBEV_CFLAGS)
examples_checksum_libev_LDFLAGS = -pthread
examples_checksum_libev_LDADD = $(LIBNBD_LIBS) $(LIBEV_LIBS) $(LIBCRYPTO_LIBS)

TESTS_SH += \
	tests/lesson-checksum-libev.sh \
	$(NULL)
