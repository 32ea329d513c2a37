# bench/bench.mk: make bench (included by Makefile.am).
#
# Benchmarks are opt-in: make check runs none of them, except that
# tests/bench-quick.sh runs "make bench QUICK=1" on a few comparisons
# to prove that the harness works (it judges no numbers); make
# check-bench runs it on every comparison, which takes minutes.  bench/run.sh says what is
# measured and how; the report goes to bench/results/DATE-HOST.md and
# stdout.
#
#   make bench                     the full run (tens of minutes)
#   make bench QUICK=1             small images, 2 runs: about a minute
#   make bench BENCH_ONLY="2 3a"   only some comparisons
#   make bench BENCH_RESULTS=DIR   the report elsewhere
#   make bench BENCH_ROUNDS=N      N rounds in every comparison (default 6)
#   make bench BLKSUM=PATH         blkhash's blksum beside nbd-evsum
#   make bench LIBNBD_COPY_LIBEV=PATH
#                                  libnbd's own copy-libev example beside
#                                  the copiers of comparison 11
#   make bench-claims BLKSUM=PATH  the runs behind README's tables
#   make bench-effects             each technique with and without
#
# make bench-compare runs the same comparisons with two builds, OLD and
# NEW, interleaved, and judges each command: bench/compare.sh says how.
#
#   make bench-compare OLD=HEAD~3 NEW=HEAD BENCH_ONLY=3a
#   make bench-compare OLD=. NEW=. NEW_ENV='LD_LIBRARY_PATH=/opt/libnbd/lib'
#
# make turns any failure of a recipe into its own exit status 2, so
# make bench-compare cannot tell git bisect run "regression" (1) from
# "cannot test this revision" (125).  For a bisect, run bench/compare.sh
# itself, which takes the same variables from the environment and
# exits 0, 1, 125 or 255 (stop), from a copy that stays put while
# bisect checks out old revisions:
#
#   cp -r bench /tmp/nbd-libev-bench
#   git bisect start BAD GOOD
#   git bisect run env OLD=GOOD NEW=HEAD BENCH_ONLY=3a \
#     /tmp/nbd-libev-bench/compare.sh

# The harness checks tests/bench-quick.sh and tests/bench-compare-quick.sh
# are among the suite's longest tests: they are in Makefile.am's
# TESTS_FIRST, which starts before the rest.
TESTS_SH += \
	tests/bench-blksum.sh \
	tests/bench-report.sh \
	$(NULL)

EXTRA_DIST += \
	bench/bench.mk \
	bench/calibrate.sh \
	bench/claims.py \
	bench/claims.spec \
	bench/compare.py \
	bench/compare.sh \
	bench/comparisons.sh \
	bench/report.py \
	bench/stats.py \
	bench/interleave.sh \
	bench/run.sh \
	bench/alive.sh \
	bench/servers.sh \
	$(NULL)

# The reports that README.md and docs/ cite ship with them, each with
# its charts (tests/doc-links.sh fails on a cited report missing here);
# other runs' results stay where make bench wrote them.
EXTRA_DIST += \
	bench/results/2026-12-02-145425-vm-request-size.svg \
	bench/results/2026-12-02-145425-vm.md \
	bench/results/2026-12-02-230343-vm.md \
	bench/results/2026-12-03-040343-vm-request-size.svg \
	bench/results/2026-12-03-040343-vm.md \
	bench/results/2026-12-03-051745-vm.md \
	bench/results/2026-12-03-120121-vm.md \
	bench/results/2026-12-03-144302-vm-delay.dat \
	bench/results/2026-12-03-144302-vm-delay.svg \
	bench/results/2026-12-03-144302-vm.md \
	bench/results/2026-12-03-165220-vm-delay.dat \
	bench/results/2026-12-03-165220-vm-delay.svg \
	bench/results/2026-12-03-165220-vm.md \
	bench/results/2026-12-03-calibrate-vm.txt \
	bench/results/2026-12-04-144342-vm.md \
	bench/results/2026-12-04-161135-vm.md \
	bench/results/2026-12-04-162520-vm.md \
	bench/results/2026-12-04-163405-vm.md \
	bench/results/2026-12-04-164348-vm.md \
	bench/results/2026-12-04-170316-vm.md \
	bench/results/2026-12-04-172347-vm.md \
	bench/results/2026-12-04-190253-vm-delay.dat \
	bench/results/2026-12-04-190253-vm-delay.svg \
	bench/results/2026-12-04-190253-vm.md \
	bench/results/2026-12-05-082819-vm-delay.dat \
	bench/results/2026-12-05-082819-vm-delay.svg \
	bench/results/2026-12-05-082819-vm.md \
	bench/results/2026-12-05-182516-vm-delay.dat \
	bench/results/2026-12-05-182516-vm-delay.svg \
	bench/results/2026-12-05-182516-vm.md \
	bench/results/2026-12-05-220415-vm-delay.dat \
	bench/results/2026-12-05-220415-vm-delay.svg \
	bench/results/2026-12-05-220415-vm.md \
	bench/results/2026-12-06-013532-vm-delay.dat \
	bench/results/2026-12-06-013532-vm-delay.svg \
	bench/results/2026-12-06-013532-vm.md \
	bench/results/2026-12-07-014626-vm.md \
	bench/results/2026-12-07-021549-vm.md \
	bench/results/2026-12-07-022505-vm.md \
	bench/results/2026-12-07-030939-vm.md \
	bench/results/2026-12-07-034702-vm-delay.dat \
	bench/results/2026-12-07-034702-vm-delay.svg \
	bench/results/2026-12-07-034702-vm.md \
	bench/results/2026-12-07-041030-vm-delay.dat \
	bench/results/2026-12-07-041030-vm-delay.svg \
	bench/results/2026-12-07-041030-vm.md \
	bench/results/2026-12-07-051227-vm.md \
	bench/results/2026-12-07-060825-vm.md \
	bench/results/2026-12-07-065223-vm.md \
	bench/results/2026-12-07-090004-vm-delay.dat \
	bench/results/2026-12-07-090004-vm-delay.svg \
	bench/results/2026-12-07-090004-vm.md \
	bench/results/2026-12-07-153033-vm-delay.dat \
	bench/results/2026-12-07-153033-vm-delay.svg \
	bench/results/2026-12-07-153033-vm.json \
	bench/results/2026-12-07-153033-vm.md \
	bench/results/2026-12-07-170553-vm-delay.dat \
	bench/results/2026-12-07-170553-vm-delay.svg \
	bench/results/2026-12-07-170553-vm.json \
	bench/results/2026-12-07-170553-vm.md \
	bench/results/2026-12-08-020649-vm-delay.dat \
	bench/results/2026-12-08-020649-vm-delay.svg \
	bench/results/2026-12-08-020649-vm.json \
	bench/results/2026-12-08-020649-vm.md \
	bench/results/2026-12-07-180538-vm-request-size.svg \
	bench/results/2026-12-07-180538-vm.json \
	bench/results/2026-12-07-180538-vm.md \
	bench/results/compare-2026-12-03-152742-vm.md \
	bench/results/compare-2026-12-03-164334-vm.md \
	bench/results/compare-2026-12-03-210554-vm.md \
	bench/results/compare-2026-12-03-213305-vm.md \
	bench/results/compare-2026-12-04-184457-vm.md \
	bench/results/compare-2026-12-04-185413-vm.md \
	bench/results/compare-2026-12-04-185650-vm.md \
	bench/results/compare-2026-12-05-215816-vm.md \
	bench/results/compare-2026-12-06-223025-vm.md \
	bench/results/compare-2026-12-07-013854-vm.md \
	bench/results/compare-2026-12-07-021801-vm.md \
	bench/results/compare-2026-12-07-022306-vm.md \
	bench/results/compare-2026-12-07-033510-vm.md \
	bench/results/compare-2026-12-07-062002-vm.md \
	bench/results/compare-2026-12-07-070105-vm.md \
	bench/results/compare-2026-12-07-081842-vm.md \
	bench/results/compare-2026-12-07-085525-vm.md \
	bench/results/compare-2026-12-08-012706-vm.md \
	bench/results/compare-2026-12-08-014316-vm.md \
	bench/results/compare-2026-12-08-015948-vm.md \
	bench/interleave.sh \
	bench/run.sh \
	bench/alive.sh \
	bench/servers.sh \
	$(NULL)

# The programs under test are the ones just built, the tools
# (bin_PROGRAMS) and the lessons (noinst_PROGRAMS, with the tests'
# helpers): TESTS_ENVIRONMENT puts $(abs_top_builddir)/tools, then
# examples, first on PATH.
bench: $(bin_PROGRAMS) $(noinst_PROGRAMS)
	$(TESTS_ENVIRONMENT) \
	QUICK="$(QUICK)" \
	BENCH_RESULTS="$(BENCH_RESULTS)" \
	BENCH_ONLY="$(BENCH_ONLY)" \
	BENCH_ROUNDS="$(BENCH_ROUNDS)" \
	BLKSUM="$(BLKSUM)" \
	LIBNBD_COPY_LIBEV="$(LIBNBD_COPY_LIBEV)" \
	$(SHELL) $(srcdir)/bench/run.sh

# Comparison 3a alone: the copy-libev lesson, nbd-evcopy, nbdcopy and
# qemu-img convert side by side, nbdkit pattern 1 GiB to nbdkit memory
# 1 GiB.
bench-copy:
	$(MAKE) $(AM_MAKEFLAGS) bench BENCH_ONLY=3a

# OLD=. or NEW=. means this build tree (its tools/ and examples/).
bench-compare: $(bin_PROGRAMS) $(noinst_PROGRAMS)
	$(TESTS_ENVIRONMENT) \
	OLD="$(OLD)" NEW="$(NEW)" \
	OLD_ENV="$(OLD_ENV)" NEW_ENV="$(NEW_ENV)" \
	QUICK="$(QUICK)" \
	BENCH_RUNS="$(BENCH_RUNS)" \
	BENCH_RESULTS="$(BENCH_RESULTS)" \
	BENCH_ONLY="$(BENCH_ONLY)" \
	BENCH_COMMANDS="$(BENCH_COMMANDS)" \
	BLKSUM="$(BLKSUM)" \
	LIBNBD_COPY_LIBEV="$(LIBNBD_COPY_LIBEV)" \
	$(SHELL) $(srcdir)/bench/compare.sh

# make claims rewrites the tables of figures in README.md,
# docs/benchmarks.md and docs/techniques.md from the runs of the reports
# bench/claims.spec names (tests/claims.sh fails where they differ).
# make bench-claims runs the comparisons of README's and benchmarks.md's
# tables, make bench-effects those of techniques.md's table of effects;
# each then points every table whose comparisons the new report has at
# it and rewrites them: commit the report, its runs (.json) and charts
# with the docs, and list them in EXTRA_DIST above.
CLAIMS_SPEC = $(srcdir)/bench/claims.spec
CLAIMS_DOCS = $(srcdir)/README.md $(srcdir)/docs/benchmarks.md \
	$(srcdir)/docs/techniques.md
# The newest full report of make bench.
CLAIMS_NEWEST = `ls -t $(srcdir)/bench/results/*-*.json | grep -v -e -quick -e compare- | head -1 | sed 's/json$$/md/'`

claims:
	python3 $(srcdir)/bench/claims.py $(CLAIMS_SPEC) $(CLAIMS_DOCS)

bench-claims: $(bin_PROGRAMS) $(noinst_PROGRAMS)
	@test -z "$(QUICK)" || { echo "bench-claims: no QUICK" >&2; exit 1; }
	@test -n "$(BLKSUM)" || { \
	  echo "bench-claims: BLKSUM=PATH: the tables compare nbd-evsum with blksum" >&2; \
	  exit 1; }
	$(MAKE) $(AM_MAKEFLAGS) bench BENCH_RESULTS= \
	  BENCH_ONLY="`python3 $(srcdir)/bench/claims.py --ids $(CLAIMS_SPEC) readme limit claims`"
	python3 $(srcdir)/bench/claims.py --use "$(CLAIMS_NEWEST)" \
	  $(CLAIMS_SPEC) $(CLAIMS_DOCS)

bench-effects: $(bin_PROGRAMS) $(noinst_PROGRAMS)
	@test -z "$(QUICK)" || { echo "bench-effects: no QUICK" >&2; exit 1; }
	$(MAKE) $(AM_MAKEFLAGS) bench BENCH_RESULTS= \
	  BENCH_ONLY="`python3 $(srcdir)/bench/claims.py --ids $(CLAIMS_SPEC) effects`"
	python3 $(srcdir)/bench/claims.py --use "$(CLAIMS_NEWEST)" \
	  $(CLAIMS_SPEC) $(CLAIMS_DOCS)

# tests/bench-quick.sh on every comparison, under the test watchdog.
check-bench: $(bin_PROGRAMS) $(noinst_PROGRAMS)
	$(MAKE) $(AM_MAKEFLAGS) check TESTS=tests/bench-quick.sh \
	  BENCH_CHECK_ONLY=all

.PHONY: bench bench-copy bench-compare bench-claims bench-effects \
	check-bench claims
