# examples/zero-extent-copy-libev.mk: build and test lists (included by Makefile.am).
# A lesson: built, not installed.  Its _SOURCES name the same common/
# modules as the cc line in its header comment (tests/build-alone.sh).

noinst_PROGRAMS += examples/zero-extent-copy-libev

examples_zero_extent_copy_libev_SOURCES = \
	examples/zero-extent-copy-libev.c \
	$(COMMON_EXTENTS) \
	$(COMMON_GLUE) \
	$(COMMON_ISZERO) \
	$(COMMON_RING) \
	$(NULL)
examples_zero_extent_copy_libev_CFLAGS = $(WARNINGS_CFLAGS) $(SANITIZER_CFLAGS) $(LIBNBD_CFLAGS) $(LIBEV_CFLAGS)
examples_zero_extent_copy_libev_LDADD = $(LIBNBD_LIBS) $(LIBEV_LIBS)

TESTS_SH += \
	tests/lesson-zero-extent-copy-libev.sh \
	$(NULL)
