# tests/fuzz/fuzz.mk: fuzz targets for the modules that compute without
# I/O (included by Makefile.am).
#
# Each target, tests/fuzz/fuzz-NAME.c, checks a property of one module
# against a model of its own (tests/fuzz/fuzz.h).  Every build links
# each target with tests/fuzz/replay.c into tests/fuzz/replay-NAME, a
# test that replays the committed inputs: the seeds in
# tests/fuzz/corpus/NAME/ and the crashes found so far in
# tests/fuzz/regress/NAME/.  An --enable-fuzzing build (CC=clang) also
# links each with libFuzzer into tests/fuzz/fuzz-NAME, which
# make fuzz FUZZ_SECONDS=N runs for N seconds each.

FUZZ_TARGETS = \
	blkhash \
	extents \
	parse \
	plan \
	$(NULL)

EXTRA_DIST += \
	tests/fuzz/corpus \
	tests/fuzz/regress \
	tests/fuzz/run.sh \
	$(NULL)

check_PROGRAMS += \
	tests/fuzz/replay-blkhash \
	tests/fuzz/replay-extents \
	tests/fuzz/replay-parse \
	tests/fuzz/replay-plan \
	$(NULL)

# What every replay adds to its target: the main that reads the files.
FUZZ_REPLAY = tests/fuzz/replay.c tests/fuzz/fuzz.h

# common/blkhash.c: any split of an image into data and zero runs gives
# the digest of the whole image computed in one go.
FUZZ_BLKHASH = \
	tests/fuzz/fuzz-blkhash.c \
	$(COMMON_BLKHASH) \
	$(COMMON_ISZERO) \
	$(NULL)
tests_fuzz_replay_blkhash_SOURCES = $(FUZZ_REPLAY) $(FUZZ_BLKHASH)
tests_fuzz_replay_blkhash_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_TARGET=\"blkhash\"
tests_fuzz_replay_blkhash_CFLAGS = $(WARNINGS_CFLAGS) $(SANITIZER_CFLAGS) $(LIBCRYPTO_CFLAGS)
tests_fuzz_replay_blkhash_LDADD = $(LIBCRYPTO_LIBS)

# common/extents.c against a model of what the map must say about each
# byte, with libnbd played by the target (tests/fuzz/fake-nbd.c).
FUZZ_EXTENTS = \
	tests/fuzz/fuzz-extents.c \
	tests/fuzz/fake-nbd.c \
	tests/fuzz/fake-nbd.h \
	$(COMMON_EXTENTS) \
	$(NULL)
tests_fuzz_replay_extents_SOURCES = $(FUZZ_REPLAY) $(FUZZ_EXTENTS)
tests_fuzz_replay_extents_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_TARGET=\"extents\"
tests_fuzz_replay_extents_CFLAGS = $(WARNINGS_CFLAGS) $(SANITIZER_CFLAGS) $(LIBNBD_CFLAGS)

# tools/lib/plan.c and zero.c: pieces against the image they plan, on
# maps made by hand (extents_next is common/extents.c's, which needs
# the stand-in for libnbd, never called here).
FUZZ_PLAN = \
	tests/fuzz/fuzz-plan.c \
	tests/fuzz/fake-nbd.c \
	tests/fuzz/fake-nbd.h \
	$(COMMON_EXTENTS) \
	$(TOOLS_PLAN) \
	$(TOOLS_ZERO) \
	$(NULL)
tests_fuzz_replay_plan_SOURCES = $(FUZZ_REPLAY) $(FUZZ_PLAN)
tests_fuzz_replay_plan_CPPFLAGS = $(TOOLS_INCLUDES) -DFUZZ_TARGET=\"plan\"
tests_fuzz_replay_plan_CFLAGS = $(WARNINGS_CFLAGS) $(SANITIZER_CFLAGS) $(LIBNBD_CFLAGS)

# tools/lib/util.c, options.c and image.c: sizes, counts, option
# values, the images on a command line and the format probe, against
# their grammars; a result or an error, never an exit.
FUZZ_PARSE = \
	tests/fuzz/fuzz-parse.c \
	$(TOOLS_IMAGE) \
	$(TOOLS_OPTIONS) \
	$(TOOLS_UTIL) \
	$(NULL)
tests_fuzz_replay_parse_SOURCES = $(FUZZ_REPLAY) $(FUZZ_PARSE)
tests_fuzz_replay_parse_CPPFLAGS = $(TOOLS_INCLUDES) -DFUZZ_TARGET=\"parse\"
tests_fuzz_replay_parse_CFLAGS = $(WARNINGS_CFLAGS) $(SANITIZER_CFLAGS) $(LIBNBD_CFLAGS)
tests_fuzz_replay_parse_LDADD = $(LIBNBD_LIBS)

if FUZZING
noinst_PROGRAMS += \
	tests/fuzz/fuzz-blkhash \
	tests/fuzz/fuzz-extents \
	tests/fuzz/fuzz-parse \
	tests/fuzz/fuzz-plan \
	$(NULL)

tests_fuzz_fuzz_blkhash_SOURCES = tests/fuzz/fuzz.h $(FUZZ_BLKHASH)
tests_fuzz_fuzz_blkhash_CFLAGS = $(WARNINGS_CFLAGS) $(FUZZ_CFLAGS) $(LIBCRYPTO_CFLAGS)
tests_fuzz_fuzz_blkhash_LDADD = $(LIBCRYPTO_LIBS)

tests_fuzz_fuzz_extents_SOURCES = tests/fuzz/fuzz.h $(FUZZ_EXTENTS)
tests_fuzz_fuzz_extents_CFLAGS = $(WARNINGS_CFLAGS) $(FUZZ_CFLAGS) $(LIBNBD_CFLAGS)

tests_fuzz_fuzz_parse_SOURCES = tests/fuzz/fuzz.h $(FUZZ_PARSE)
tests_fuzz_fuzz_parse_CPPFLAGS = $(TOOLS_INCLUDES)
tests_fuzz_fuzz_parse_CFLAGS = $(WARNINGS_CFLAGS) $(FUZZ_CFLAGS) $(LIBNBD_CFLAGS)
tests_fuzz_fuzz_parse_LDADD = $(LIBNBD_LIBS)

tests_fuzz_fuzz_plan_SOURCES = tests/fuzz/fuzz.h $(FUZZ_PLAN)
tests_fuzz_fuzz_plan_CPPFLAGS = $(TOOLS_INCLUDES)
tests_fuzz_fuzz_plan_CFLAGS = $(WARNINGS_CFLAGS) $(FUZZ_CFLAGS) $(LIBNBD_CFLAGS)
endif

# make fuzz: every target for FUZZ_SECONDS each, FUZZ_JOBS at a time
# (FUZZ_TARGETS="extents plan" for some of them), on a scratch copy of
# its inputs in tests/fuzz/work/.
FUZZ_SECONDS = 60
FUZZ_JOBS = 1
if FUZZING
fuzz: all
	FUZZ_JOBS=$(FUZZ_JOBS) $(SHELL) $(srcdir)/tests/fuzz/run.sh \
	  $(FUZZ_SECONDS) $(srcdir) $(FUZZ_TARGETS)
else
fuzz:
	@echo "make fuzz needs a build configured with --enable-fuzzing," \
	  "which takes clang for its libFuzzer" >&2; exit 1
endif

clean-local: clean-fuzz
clean-fuzz:
	rm -rf tests/fuzz/work

.PHONY: fuzz clean-fuzz
