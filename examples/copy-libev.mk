# examples/copy-libev.mk: build and test lists (included by Makefile.am).
# A lesson: built, not installed.  Its _SOURCES name the same common/
# modules as the cc line in its header comment (tests/build-alone.sh).

noinst_PROGRAMS += examples/copy-libev

examples_copy_libev_SOURCES = \
	examples/copy-libev.c \
	$(COMMON_GLUE) \
	$(COMMON_RING) \
	$(NULL)
examples_copy_libev_CFLAGS = $(WARNINGS_CFLAGS) $(SANITIZER_CFLAGS) $(LIBNBD_CFLAGS) $(LIBEV_CFLAGS)
examples_copy_libev_LDADD = $(LIBNBD_LIBS) $(LIBEV_LIBS)

TESTS_SH += \
	tests/lesson-copy-libev.sh \
	$(NULL)
