# examples/checksum-libev.mk: build and test lists (included by Makefile.am).

bin_PROGRAMS += examples/checksum-libev

examples_checksum_libev_SOURCES = \
	examples/checksum-libev.c \
	$(COMMON_BLKHASH) \
	$(COMMON_CONN) \
	$(COMMON_CONNECT) \
	$(COMMON_CONNS) \
	$(COMMON_EXTENTS) \
	$(COMMON_IMAGE) \
	$(COMMON_OPTIONS) \
	$(COMMON_POOL) \
	$(COMMON_RING) \
	$(COMMON_SLOTHASH) \
	$(COMMON_STOP) \
	$(COMMON_UTIL) \
	$(NULL)
# -pthread: the block digests are computed on a pool of hash threads.
examples_checksum_libev_CFLAGS = \
	$(WARNINGS_CFLAGS) \
	-pthread \
	$(LIBNBD_CFLAGS) \
	$(LIBEV_CFLAGS) \
	$(LIBCRYPTO_CFLAGS) \
	$(NULL)
examples_checksum_libev_LDFLAGS = -pthread
examples_checksum_libev_LDADD = \
	$(LIBNBD_LIBS) \
	$(LIBEV_LIBS) \
	$(LIBCRYPTO_LIBS) \
	$(NULL)

# Each test checks one behaviour against tests/blkhash-ref.py or
# blkhash's published values.
TESTS_SH += \
	tests/checksum-errors.sh \
	tests/checksum-files.sh \
	tests/checksum-no-extents.sh \
	tests/checksum-out-of-order.sh \
	tests/checksum-published.sh \
	tests/checksum-qemu-nbd.sh \
	tests/checksum-ring-shapes.sh \
	tests/checksum-sparse-random.sh \
	tests/checksum-unaligned.sh \
	tests/checksum-zero-runs.sh \
	$(NULL)

EXTRA_DIST += tests/blkhash-ref.py
