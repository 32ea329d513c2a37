# tools/nbd-evcopy.mk: build and test lists (included by Makefile.am).

bin_PROGRAMS += tools/nbd-evcopy

tools_nbd_evcopy_SOURCES = \
	tools/copy/copy.c \
	tools/copy/main.c \
	tools/copy/nbd-evcopy.h \
	tools/copy/resume.c \
	tools/copy/setup.c \
	tools/copy/verify.c \
	tools/copy/zeroes.c \
	$(NULL)
tools_nbd_evcopy_CPPFLAGS = $(TOOLS_INCLUDES)
tools_nbd_evcopy_CFLAGS = $(TOOLS_COMPILE_FLAGS)
tools_nbd_evcopy_LDFLAGS = $(TOOLS_LINK_FLAGS)
tools_nbd_evcopy_LDADD = $(TOOLS_LIBS)
# Relinked when the library changes.
tools_nbd_evcopy_DEPENDENCIES = tools/lib/libtools.a

# One behaviour each, against real servers the tests start themselves
# (tests/functions.sh).  copy-*: the plain copy (--no-extents
# --no-sparse, every byte read and written); zero-*: extents, zeroes,
# --checksum and --verify.
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
	tests/copy-needless-faults.sh \
	tests/interrupt-phases.sh \
	tests/copy-write-error-offset.sh \
	tests/copy-flush-error.sh \
	tests/copy-help.sh \
	tests/copy-unaligned-size.sh \
	tests/copy-null.sh \
	tests/file-block-device.sh \
	tests/file-endpoint.sh \
	tests/file-enospc.sh \
	tests/file-write-behind.sh \
	tests/file-writeback-error.sh \
	tests/file-zero-fallback.sh \
	tests/pipe-endpoint.sh \
	$(NULL)

TESTS_SH += \
	tests/zero-log.sh \
	tests/zero-allocation.sh \
	tests/zero-sparse-random.sh \
	tests/zero-qcow2.sh \
	tests/zero-fallbacks.sh \
	tests/zero-sizes.sh \
	tests/zero-errors.sh \
	tests/zero-verify.sh \
	$(NULL)

EXTRA_DIST += \
	tests/zero-functions.sh \
	$(NULL)
