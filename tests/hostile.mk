# tests/hostile.mk: the hostile-server campaign (included by Makefile.am).
#
# tests/hostile.py chooses for each seed, reproducibly, an image, its
# servers and their faults, the endpoints and the options, runs a tool
# or a lesson once and judges the outcome by oracles (its header
# comment lists them).  make check runs a few fixed seeds
# (tests/hostile.sh); the campaign itself is opt-in:
#
#   make check-hostile SEEDS=1000         seeds 1 to 1000
#   make check-hostile SEEDS=N FIRST=S    N seeds from S on
#   make check-hostile SEED=K             replay one seed, verbosely
#   make check-hostile JOBS=2 ...         two seeds at once (at most 2)
#
# The interrupt rounds stop nbd-evcopy with SIGINT, SIGTERM or SIGKILL
# at the K-th write its destination's server sees (the K-th read of the
# source, for a file or a pipe), check the destination block by block,
# and finish the copy with the printed --resume command (or the same
# command again, after SIGKILL); make check runs a few
# (tests/resume-rounds.sh):
#
#   make check-resume ROUNDS=100          rounds 1 to 100
#   make check-resume ROUND=K             replay one round, verbosely
#
# The fixed seeds and rounds stand each for an outcome class (a refusal,
# a kill, a timeout...: tests/hostile.py's COVER_SEEDS and COVER_ROUNDS)
# and assert that they still end in it.  When the draws change, write
# them again, the quickest seed and round found of each class:
#
#   make hostile-cover                    tests/hostile-seeds.txt and
#                                         tests/resume-rounds.txt
#
# A failure prints its seed and the command that replays it.
# tests/hostile-oracle.sh shows the oracles refusing wrong results:
# stand-ins for nbd-evcopy that are wrong on purpose (--programs=DIR).

# tests/hostile.sh, one of the longest tests, is in Makefile.am's
# TESTS_FIRST.
TESTS_SH += \
	tests/hostile-oracle.sh \
	tests/resume-rounds.sh \
	$(NULL)
EXTRA_DIST += \
	tests/hostile.py \
	tests/hostile-seeds.txt \
	tests/resume-rounds.txt \
	$(NULL)

SEEDS = 100
FIRST = 1
JOBS = 1

check-hostile: $(bin_PROGRAMS) $(noinst_PROGRAMS)
	$(TESTS_ENVIRONMENT) python3 $(srcdir)/tests/hostile.py \
	  $(if $(SEED),--seed=$(SEED) -v,--seeds=$(SEEDS) --first=$(FIRST)) \
	  --jobs=$(JOBS)

ROUNDS = 20

check-resume: $(bin_PROGRAMS) $(noinst_PROGRAMS)
	$(TESTS_ENVIRONMENT) python3 $(srcdir)/tests/hostile.py \
	  $(if $(ROUND),--round=$(ROUND) -v,--rounds=$(ROUNDS) --first=$(FIRST)) \
	  --jobs=$(JOBS)

hostile-cover: $(bin_PROGRAMS) $(noinst_PROGRAMS)
	$(TESTS_ENVIRONMENT) python3 $(srcdir)/tests/hostile.py \
	  --cover=$(srcdir)/tests/hostile-seeds.txt --jobs=2
	$(TESTS_ENVIRONMENT) python3 $(srcdir)/tests/hostile.py \
	  --cover-rounds=$(srcdir)/tests/resume-rounds.txt --jobs=2

.PHONY: check-hostile check-resume hostile-cover
