# tools/nbd-evsum.mk: build and test lists (included by Makefile.am).

bin_PROGRAMS += tools/nbd-evsum

tools_nbd_evsum_SOURCES = tools/nbd-evsum.c
tools_nbd_evsum_CPPFLAGS = $(TOOLS_INCLUDES)
tools_nbd_evsum_CFLAGS = $(TOOLS_COMPILE_FLAGS)
tools_nbd_evsum_LDFLAGS = $(TOOLS_LINK_FLAGS)
tools_nbd_evsum_LDADD = $(TOOLS_LIBS)
# Relinked when the library changes.
tools_nbd_evsum_DEPENDENCIES = tools/lib/libtools.a

# Each test checks one behaviour against tests/blkhash-ref.py or
# blkhash's published values.
TESTS_SH += \
	tests/checksum-block-device.sh \
	tests/checksum-direct.sh \
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
