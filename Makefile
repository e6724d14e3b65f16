# passnet - build, dependencies, tests, corpus and benchmarks.
#
#   make              build bin/passnet
#   make deps         install the Debian packages passnet needs (apt-get)
#   make test         deps + build + every test (unit, CLI, conformance); the
#                     tests that read a corpus build a small fixture corpus
#                     (tests/fixtures/mkcorpus.py) into build/fixture-corpus/
#   make test-corpus  those tests again on the team's test corpus (SHARED=DIR)
#   make test-sanitize   the unit and CLI tests against an ASan+LSan+UBSan build
#                     in build/san/ (tests/sanitize.sh); any report fails
#   make test-sanitize-ci   the same for the unit tests and the CLI tests of
#                     parsing and bad input (SAN_CI_TESTS), as CI runs it
#   make check        everything, for a developer before a big merge: test,
#                     the whole test-sanitize, test-corpus, test-tsan and
#                     longer fuzzing (docs/testing.md says which tier runs where)
#   make test-tsan    ThreadSanitizer (clang, libomp, Archer) over the unit tests
#                     of the OpenMP paths, in build/tsan/
#   make mpi          bin/passnet-mpi, the MPI driver (needs libopenmpi-dev)
#   make corpus       deps + build + the main job on the default corpus
#   make bench-...    benchmarks; each prints its figures (bench-ort: against
#                     ONNX Runtime, needs node and npm); CORPUS=DIR names the
#                     corpus (models/ and zoo/), the fixture corpus by default
#   make bench-scale N=1000   a generated hub-like corpus of N models
#                     (bench/scale/, cached in build/scale/): build, exec, export
#                     per stage; bench-scale-series for N = 1000, 10000, 100000
#   make fuzz         libFuzzer harnesses (tests/fuzz/, clang, ASan + UBSan)
#                     in build/fuzz/; make fuzz-run SECONDS=30 runs each

CC      ?= gcc
PKGS    := libarchive libprotobuf-c lmdb libxxhash nettle libcurl json-c
ONNX_PROTO_DIR ?= /usr/include
OPT     ?= -O3 -march=native
CFLAGS  ?= $(OPT) -g
# What every build shares, the sanitized one (test-sanitize) included.
# -fno-trapping-math: passnet never reads or enables floating-point
# exception flags, so the compiler may evaluate both arms of a select;
# without it the branch-free math of runtime/ops/mathutil.h (tanh, erf,
# exp, the logistic) stays scalar.  Values are the same (no -ffast-math:
# NaNs, infinities, signed zeros and rounding keep IEEE semantics).
BASE_CFLAGS := -std=c11 -Wall -Wextra -Werror -fopenmp -D_GNU_SOURCE -MMD -MP \
           -fno-trapping-math -Wno-format-truncation \
           -I. -Ibuild/gen
CFLAGS  += $(BASE_CFLAGS)
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)

PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
LDLIBS  += $(PKG_LIBS) -lm -ldl
LDFLAGS += -fopenmp

# Debian packages: building (nettle: SHA-256/512 and base64; libcurl: url
# sources; json-c: npm's answers, task.json, results), the store tools the
# tests read with, the test framework, the oracles (ONNX backend tests,
# python3-onnx checker), the tools the source tests build a .deb and a local
# apt repository with (dpkg-dev), and a headless browser that renders the
# HTML report.
DEB_BUILD := gcc make pkg-config libarchive-dev libprotobuf-c-dev protobuf-c-compiler \
             liblmdb-dev libxxhash-dev libonnx-dev nettle-dev libcurl4-openssl-dev \
             libjson-c-dev
DEB_TEST  := lmdb-utils libcmocka-dev libonnx-testdata python3-onnx python3-numpy \
             zip unzip xz-utils bzip2 dpkg-dev chromium openmpi-bin libopenmpi-dev
# tests/cli/slurm_recipe.sh starts a single-node Slurm cluster of its own
# (slurmctld, slurmd, munged) to run contrib/slurm's job array on.
DEB_TEST  += slurm-wlm munge
# tests/cli/inputs_meaning.sh exports torchaudio's Conformer with torch.onnx.
DEB_TEST  += python3-torch python3-torchaudio python3-torchvision
# `make fuzz`: clang with its sanitizer and libFuzzer runtimes, and clang's
# OpenMP runtime (the library is built with -fopenmp by clang too).
DEB_FUZZ  := clang libclang-rt-dev libomp-dev
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

GEN_DIR   := build/gen
GEN_SRC   := $(GEN_DIR)/onnx/onnx.pb-c.c $(GEN_DIR)/passnet.pb-c.c $(GEN_DIR)/testdata.pb-c.c
GEN_HDR   := $(GEN_SRC:.c=.h) $(GEN_DIR)/exec_build.h $(GEN_DIR)/check_build.h
# The layers, lowest first (ARCHITECTURE.md; tests/cli/layering.sh checks
# that includes only go down this list).
LIB_DIRS  := common schemas model runtime runtime/ops canon store extract partition dedup \
             exec export judge report cmd
LIB_SRC   := $(sort $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c)))
LIB_OBJ   := $(patsubst %.c,build/obj/%.o,$(LIB_SRC)) \
             $(patsubst $(GEN_DIR)/%.c,build/obj/gen/%.o,$(GEN_SRC))
UNIT_SRC  := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN  := $(patsubst tests/unit/%.c,build/tests/%,$(UNIT_SRC))
# The fuzz harnesses (tests/fuzz/, see "fuzzing" below).
FUZZ_HARNESSES := onnx_model archive manifest tensorproto canon_decode json check_task torchscript
FUZZ_BIN    := $(patsubst %,build/fuzz/%,$(FUZZ_HARNESSES))
FUZZ_REPLAY := $(patsubst %,build/fuzz-replay/%,$(FUZZ_HARNESSES))

.PHONY: FORCE all mpi deps fuzz fuzz-seeds fuzz-run test test-corpus unit-test cli-test conformance-test corpus corpus-baseline clean \
        check test-sanitize-ci \
        ort bench-extract bench-dedup bench-mpi bench-peer bench-ort bench-ort-models bench-ort-dtypes bench-torchscript bench-protocol bench-kernels bench-deps \
        bench-scale bench-scale-series bench-scale-stages test-sanitize sanitize-build \
        test-tsan
.SECONDARY: $(GEN_SRC) $(filter %.pb-c.h,$(GEN_HDR))
all: bin/passnet

deps:
	@missing=""; for p in $(DEB_BUILD) $(DEB_TEST) $(DEB_FUZZ); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	command -v node >/dev/null 2>&1 || missing="$$missing nodejs"; \
	command -v npm >/dev/null 2>&1 || missing="$$missing npm"; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

$(GEN_DIR)/onnx/onnx.pb-c.c $(GEN_DIR)/onnx/onnx.pb-c.h &: $(ONNX_PROTO_DIR)/onnx/onnx.proto
	@mkdir -p $(GEN_DIR)
	$(Q)protoc-c -I$(ONNX_PROTO_DIR) --c_out=$(GEN_DIR) onnx/onnx.proto

# Profiles record which executor measured them: a hash of the executor
# library's sources (runtime/: kernels, sessions, inference; not the
# profiling stage in exec/, whose messages do not change a measurement),
# rewritten only when it changes so that only its readers rebuild.
$(GEN_DIR)/exec_build.h: FORCE
	@mkdir -p $(GEN_DIR)
	@h=$$(cat runtime/*.c runtime/*.h runtime/ops/*.c runtime/ops/*.h 2>/dev/null | sha256sum | cut -c1-16); \
	echo "#define PN_EXECUTOR_BUILD \"$$h\"" > $@.tmp; \
	cmp -s $@.tmp $@ 2>/dev/null && rm -f $@.tmp || mv $@.tmp $@

# Check results record which build judged them: the executor, model loading
# and the judge itself (judge/: the check, its comparison, the tolerance
# ladder, its ORT runs; the scorer too, which the check calls).
$(GEN_DIR)/check_build.h: FORCE
	@mkdir -p $(GEN_DIR)
	@h=$$(cat runtime/*.c runtime/*.h runtime/ops/*.c runtime/ops/*.h model/*.c model/*.h \
	  judge/*.c judge/*.h 2>/dev/null | sha256sum | cut -c1-16); \
	echo "#define PN_CHECK_BUILD \"$$h\"" > $@.tmp; \
	cmp -s $@.tmp $@ 2>/dev/null && rm -f $@.tmp || mv $@.tmp $@
FORCE:

$(GEN_DIR)/%.pb-c.c $(GEN_DIR)/%.pb-c.h: schemas/%.proto $(GEN_DIR)/onnx/onnx.pb-c.h
	$(Q)protoc-c -I$(ONNX_PROTO_DIR) -Ischemas --c_out=$(GEN_DIR) schemas/$*.proto

# V=1 shows the full commands.
Q := $(if $(V),,@)

build/obj/gen/%.o: $(GEN_DIR)/%.c $(GEN_HDR)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) $(PKG_CFLAGS) -c $< -o $@

build/obj/%.o: %.c | $(GEN_HDR)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) $(PKG_CFLAGS) -c $< -o $@

# Objects are linked directly (no .a).  The op table (runtime/op_table.c)
# names every kernel, cost and inference function with a strong reference,
# so a missing one fails this link rather than becoming NULL.
bin/passnet: build/obj/passnet.o $(LIB_OBJ)
	@mkdir -p bin
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# bin/passnet-mpi (mpi/passnet_mpi.c): the MPI driver, built only by `make
# mpi` (and by `make test`, whose deps install OpenMPI): plain `make` does
# not need OpenMPI.  It coordinates ranks and runs bin/passnet, so it links
# OpenMPI alone, found by pkg-config (Debian's libopenmpi-dev: ompi-c).
mpi: bin/passnet bin/passnet-mpi
bin/passnet-mpi: mpi/passnet_mpi.c
	@mkdir -p bin
	@pkg-config --exists ompi-c || { echo "make mpi: OpenMPI not found (make deps installs libopenmpi-dev)"; exit 1; }
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(OPT) -g -std=c11 -Wall -Wextra -Werror -Wno-format-truncation $$(pkg-config --cflags ompi-c) $< \
	  $$(pkg-config --libs ompi-c) -o $@

build/tests/%: tests/unit/%.c $(LIB_OBJ) | $(GEN_HDR)
	@mkdir -p build/tests
	@$(if $(Q),echo "  TEST    $@")
	$(Q)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) $< $(LIB_OBJ) $(LDLIBS) -lcmocka -o $@

# Fixture tools the tests build their inputs with.
TOOLS := build/tools/mkarchive build/tools/mkprofiles $(FUZZ_REPLAY) build/tools/canon_seeds
build/tools/%: tests/tools/%.c
	@mkdir -p build/tools
	@$(if $(Q),echo "  TOOL    $@")
	$(Q)$(CC) $(CFLAGS) $(PKG_CFLAGS) $< $(LDLIBS) -o $@

# mkprofiles writes store records, so it links passnet's objects.
build/tools/mkprofiles: tests/tools/mkprofiles.c $(LIB_OBJ) | $(GEN_HDR)
	@mkdir -p build/tools
	@$(if $(Q),echo "  TOOL    $@")
	$(Q)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) $< $(LIB_OBJ) $(LDLIBS) -o $@

# The batch generalization trial over a corpus (tools/gen_trial.c: one
# line per model, for reports; not a test).
build/tools/gen_trial: tools/gen_trial.c $(LIB_OBJ) | $(GEN_HDR)
	@mkdir -p build/tools
	@$(if $(Q),echo "  TOOL    $@")
	$(Q)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) $< $(LIB_OBJ) $(LDLIBS) -o $@

# ONNX Runtime's CPU library for `passnet baseline` / `exec --baseline ort`
# (exec/ort.c opens it at run time): the one the npm package onnxruntime-node
# ships (bench/ort/package.json pins the version), copied to build/ort/,
# where passnet looks beside its bin/.
ORT_NPM_LIB := bench/ort/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1
ort: build/ort/libonnxruntime.so.1
build/ort/libonnxruntime.so.1: bench/ort/package.json bench/ort/package-lock.json
	@command -v npm >/dev/null || { echo "make ort needs npm (make deps installs it)"; exit 1; }
	cd bench/ort && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund
	@mkdir -p build/ort
	cp $(ORT_NPM_LIB) $@

# ONNX Runtime's C API, timed like `passnet time` (bench/ort/ort_time.c); the
# library is opened at run time, so building needs no ORT.
build/bench/ort_time: bench/ort/ort_time.c $(LIB_OBJ) | $(GEN_HDR)
	@mkdir -p build/bench
	@$(if $(Q),echo "  BENCH   $@")
	$(Q)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) $< $(LIB_OBJ) $(LDLIBS) -ldl -o $@

# --- fuzzing -------------------------------------------------------------------

# One libFuzzer harness per parser of outside bytes (tests/fuzz/<name>.c),
# built by clang with AddressSanitizer and UndefinedBehaviorSanitizer over
# the library rebuilt by clang into build/fuzz/obj/ (never mixed with gcc's
# build/obj/).  The same harnesses built by gcc with tests/fuzz/replay.c
# (build/fuzz-replay/) let `make test` replay the seeds and the regression
# inputs without clang (tests/cli/fuzz_regressions.sh).
FUZZ_CC     ?= clang
# -Werror stays gcc's: clang warns about other things, and the fuzz build
# must not break on them.  UBSan reports abort, so libFuzzer sees a crash.
FUZZ_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
               -fno-sanitize-recover=undefined -std=c11 -Wall -Wextra -fopenmp \
               -D_GNU_SOURCE -MMD -MP -I. -Ibuild/gen
FUZZ_OBJ    := $(patsubst build/obj/%,build/fuzz/obj/%,$(LIB_OBJ))
SECONDS     ?= 30

fuzz: $(FUZZ_BIN)

build/fuzz/obj/gen/%.o: $(GEN_DIR)/%.c $(GEN_HDR)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZCC  $<")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) $(PKG_CFLAGS) -c $< -o $@

build/fuzz/obj/%.o: %.c | $(GEN_HDR)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZCC  $<")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(PKG_CFLAGS) -c $< -o $@

$(FUZZ_BIN): build/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(FUZZ_OBJ) | $(GEN_HDR)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(PKG_CFLAGS) $< $(FUZZ_OBJ) \
	    $(LDLIBS) -o $@

$(FUZZ_REPLAY): build/fuzz-replay/%: tests/fuzz/%.c tests/fuzz/replay.c tests/fuzz/fuzz.h \
                $(LIB_OBJ) | $(GEN_HDR)
	@mkdir -p build/fuzz-replay
	@$(if $(Q),echo "  REPLAY  $@")
	$(Q)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) $< tests/fuzz/replay.c $(LIB_OBJ) \
	    $(LDLIBS) -o $@

build/tools/canon_seeds: tests/fuzz/canon_seeds.c $(LIB_OBJ) | $(GEN_HDR)
	@mkdir -p build/tools
	@$(if $(Q),echo "  TOOL    $@")
	$(Q)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) $< $(LIB_OBJ) $(LDLIBS) -o $@

# Seeds: small real files (tests/fuzz/mkseeds.sh) beside the committed
# ones in tests/fuzz/seeds/; libFuzzer adds what it finds to build/fuzz/corpus/.
fuzz-seeds: build/tools/canon_seeds
	@tests/fuzz/mkseeds.sh build/fuzz/seeds build/tools/canon_seeds

fuzz-run: deps
	@$(MAKE) --no-print-directory -j$(NPROC) fuzz build/tools/canon_seeds
	@$(MAKE) --no-print-directory fuzz-seeds
	@tests/fuzz/run.sh $(SECONDS) $(FUZZ_HARNESSES)

# --- tests -------------------------------------------------------------------

NPROC := $(shell nproc 2>/dev/null || echo 2)

test: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all bin/passnet-mpi $(UNIT_BIN) $(TOOLS)
	@tests/run-all.sh

# The CLI tests that read a corpus (tests/cli/lib.sh: need_corpus), on the
# team's 71-model test corpus instead of the fixture corpus: the real
# architectures, for wider coverage.  CI has it beside the clone; without it
# this target fails rather than skips.
SHARED ?= ../shared/corpus
test-corpus: deps
	@[ -d "$(SHARED)/models" ] || { echo "test-corpus: no corpus at $(SHARED) (models/ missing)"; exit 1; }
	@$(MAKE) --no-print-directory -j$(NPROC) all $(TOOLS)
	@PASSNET_CORPUS="$(abspath $(SHARED))" tests/run-all.sh corpus

unit-test: all $(UNIT_BIN)
	@tests/run-all.sh unit

cli-test: all $(TOOLS)
	@tests/run-all.sh cli

# --- sanitizers ----------------------------------------------------------------

# The whole suite (tests/run-all.sh) again against a build with
# AddressSanitizer (leaks included) and UndefinedBehaviorSanitizer: passnet,
# its unit tests and the fixture tools, in build/san/ so that nothing mixes
# with build/ and bin/.  -O1 keeps the stacks readable at a tolerable speed;
# -fno-sanitize-recover makes every UBSan finding fatal like ASan's.
# tests/sanitize.sh sets the runtime options and sends every report to a file,
# so that a report fails its test even where the test expected passnet to
# fail.  SAN_TESTS narrows the run (tests/run-all.sh's argument: unit, cli or
# all; SAN_ONLY names single tests, e.g. SAN_ONLY="unit/test_store cli/check").
SAN       := build/san
SAN_OPT   ?= -O1 -march=native
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
SAN_CFLAGS := $(SAN_OPT) -g $(SAN_FLAGS) $(BASE_CFLAGS)
# Both runtimes linked in: with libubsan.so beside libasan.so (gcc 12), UBSan
# reports ignore log_path and go to stderr, where a test that expects an error
# would not see them; with only libubsan static, ASan's go there instead.
# Linked in together they share one copy of the common code and write every
# report to the file (tests/sanitize.sh gives both the same common options).
SAN_LDFLAGS := $(SAN_FLAGS) -static-libasan -static-libubsan -fopenmp
SAN_LIB_OBJ := $(patsubst build/obj/%,$(SAN)/obj/%,$(LIB_OBJ))
SAN_UNIT_BIN := $(patsubst build/tests/%,$(SAN)/tests/%,$(UNIT_BIN))
# the test tools that write stores, sanitized; the fuzz replays stay gcc's
# plain ones (tests/cli/fuzz_regressions.sh reads build/fuzz-replay/)
SAN_TOOLS := $(SAN)/tools/mkarchive $(SAN)/tools/mkprofiles
SAN_TESTS ?= all
SAN_ONLY ?=

$(SAN)/obj/gen/%.o: $(GEN_DIR)/%.c $(GEN_HDR)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC SAN  $<")
	$(Q)$(CC) $(SAN_CFLAGS) $(PKG_CFLAGS) -c $< -o $@

$(SAN)/obj/%.o: %.c | $(GEN_HDR)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC SAN  $<")
	$(Q)$(CC) $(SAN_CFLAGS) $(PKG_CFLAGS) -c $< -o $@

$(SAN)/bin/passnet: $(SAN)/obj/passnet.o $(SAN_LIB_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(SAN_LDFLAGS) $^ $(LDLIBS) -o $@

$(SAN)/tests/%: tests/unit/%.c $(SAN_LIB_OBJ) | $(GEN_HDR)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TEST    $@")
	$(Q)$(CC) $(SAN_CFLAGS) $(PKG_CFLAGS) $(SAN_LDFLAGS) $< $(SAN_LIB_OBJ) $(LDLIBS) -lcmocka -o $@

$(SAN)/tools/mkarchive: tests/tools/mkarchive.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TOOL    $@")
	$(Q)$(CC) $(SAN_CFLAGS) $(PKG_CFLAGS) $(SAN_LDFLAGS) $< $(LDLIBS) -o $@

$(SAN)/tools/mkprofiles: tests/tools/mkprofiles.c $(SAN_LIB_OBJ) | $(GEN_HDR)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TOOL    $@")
	$(Q)$(CC) $(SAN_CFLAGS) $(PKG_CFLAGS) $(SAN_LDFLAGS) $< $(SAN_LIB_OBJ) $(LDLIBS) -o $@

sanitize-build:
	@$(MAKE) --no-print-directory -j$(NPROC) $(SAN)/bin/passnet bin/passnet-mpi $(SAN_UNIT_BIN) $(SAN_TOOLS) \
	  $(FUZZ_REPLAY) build/tools/canon_seeds

test-sanitize: deps sanitize-build
	@SAN_ONLY="$(SAN_ONLY)" tests/sanitize.sh $(SAN_TESTS)

# CI's sanitized tier: the plain build has run every test already, so the
# sanitized one runs what reads outside bytes and bad input (every unit test,
# the parsers' and the hostile inputs' CLI tests, the judge's hostile
# candidates in redteam, the 8-bit kernels' edge cases in qdq_chains),
# where a memory error would hide; `make
# test-sanitize` (in `make check`) runs all of it.
SAN_CI_TESTS := unit/* cli/extract_bad_input cli/hostile_inputs cli/hostile_semantic \
                cli/fuzz_regressions cli/redteam cli/sources_url cli/sources_npm \
                cli/sources_deb cli/merge cli/disk_full cli/stdout_full cli/run_binding \
                cli/export_bad_variants cli/kill_points cli/qdq_chains
test-sanitize-ci: deps sanitize-build
	@SAN_ONLY="$(SAN_CI_TESTS)" tests/sanitize.sh all

# ThreadSanitizer over the unit tests that run OpenMP code writing shared
# state (the store's parallel readers and batched writers, parallel source
# reading, the parallel kernels).  Debian's libgomp is not built with TSan and
# synchronises its barriers with futexes TSan cannot see, so a gcc build
# reports races on every parallel region; clang's libomp instead loads Archer
# (libarcher.so, OMPT), which tells TSan about every OpenMP barrier, task and
# lock, and ignore_noninstrumented_modules hides the runtime's own accesses.
# So this build uses Debian's clang and libomp (libomp-dev), in build/tsan/,
# and runs those unit tests and the CLI tests in TSAN_CLI (models run and a
# store built on 2 threads) against it; a report fails its test (log_path
# and tests/sanitize.sh --after, as for test-sanitize).
TSAN      := build/tsan
TSAN_CC   ?= clang
TSAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer
# The warnings policy (-Werror) is gcc's: clang's other warnings are shown,
# not fatal, and gcc-only options in BASE_CFLAGS are not errors.
TSAN_CFLAGS := -O1 -g $(TSAN_FLAGS) $(BASE_CFLAGS) -Wno-unknown-warning-option -Wno-error
TSAN_LIB_OBJ := $(patsubst build/obj/%,$(TSAN)/obj/%,$(LIB_OBJ))
TSAN_UNITS ?= test_store test_sources test_gemm test_conv test_pool test_layout test_math \
              test_resize test_calibrate test_memo
TSAN_UNIT_BIN := $(addprefix $(TSAN)/tests/,$(TSAN_UNITS))
# and passnet itself on the CLI tests that run models and builds on 2 threads
TSAN_CLI  ?= exec_threads dedup_determinism extract_determinism
# Reached only through the pattern rule below: kept, not deleted as intermediates.
.SECONDARY: $(TSAN_LIB_OBJ)

$(TSAN)/obj/gen/%.o: $(GEN_DIR)/%.c $(GEN_HDR)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC TSAN $<")
	$(Q)$(TSAN_CC) $(TSAN_CFLAGS) $(PKG_CFLAGS) -c $< -o $@

$(TSAN)/obj/%.o: %.c | $(GEN_HDR)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC TSAN $<")
	$(Q)$(TSAN_CC) $(TSAN_CFLAGS) $(PKG_CFLAGS) -c $< -o $@

$(TSAN)/bin/passnet: $(TSAN)/obj/passnet.o $(TSAN_LIB_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(TSAN_CC) $(TSAN_FLAGS) -fopenmp $^ $(LDLIBS) -o $@

$(TSAN)/tests/%: tests/unit/%.c $(TSAN_LIB_OBJ) | $(GEN_HDR)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TEST    $@")
	$(Q)$(TSAN_CC) $(TSAN_CFLAGS) $(PKG_CFLAGS) $(TSAN_FLAGS) -fopenmp $< $(TSAN_LIB_OBJ) \
	    $(LDLIBS) -lcmocka -o $@

DEB_TSAN := clang libomp-dev
test-tsan: deps
	@missing=""; for p in $(DEB_TSAN); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
	@$(MAKE) --no-print-directory -j$(NPROC) $(TSAN)/bin/passnet $(TSAN_UNIT_BIN)
	@rm -rf $(TSAN)/logs && mkdir -p $(TSAN)/logs/new
	@SAN_LOGS="$(abspath $(TSAN)/logs)" \
	  TSAN_OPTIONS="ignore_noninstrumented_modules=1:halt_on_error=1:abort_on_error=1:log_path=$(abspath $(TSAN)/logs)/new/tsan:log_exe_name=1" \
	  PN_BIN="$(abspath $(TSAN)/bin/passnet)" PN_UNIT_DIR=$(TSAN)/tests \
	  PN_ONLY="$(addprefix unit/,$(TSAN_UNITS)) $(addprefix cli/,$(TSAN_CLI))" \
	  PN_AFTER_TEST="sh $(abspath tests/sanitize.sh) --after" tests/run-all.sh all

# Everything, for a developer before a big merge (CI runs a shorter tier:
# .ci/run; docs/testing.md).
check: test test-sanitize test-corpus test-tsan
	@FUZZ_SEED=1 $(MAKE) --no-print-directory fuzz-run SECONDS=$(or $(FUZZ_SECONDS),300)

# --- the main job --------------------------------------------------------------

# The main job: every stage over the default corpus.  exec measures with a
# short protocol and a time budget (what is left is measured by the next
# run); the ONNX Runtime baseline times what exec profiled, under a budget
# of its own, for the compiler-regression share (exec/headline.h) that
# baseline, the report's first section and stats print; the report and
# the task set are written beside the store.
DB ?= passnet.lmdb
EXEC_BUDGET ?= 300
# 120 s: with ORT's install (some 15 s from npm) the job grows by about 2.5 minutes.
BASELINE_BUDGET ?= 120
OUT ?= passnet-out
# The commands are not echoed: each stage prints its one summary line, which
# counts its warnings by kind and names the command that lists them
# (`passnet ls --warnings`); PASSNET_FLAGS=-v prints every warning instead.
PASSNET_FLAGS ?=
corpus: deps
	@$(MAKE) --no-print-directory -s -j$(NPROC) all
	@bin/passnet $(PASSNET_FLAGS) --db $(DB) build --manifest data-manifest.txt
	@bin/passnet $(PASSNET_FLAGS) --db $(DB) exec --warmup 1 --trials 3 --budget $(EXEC_BUDGET)
	@$(MAKE) --no-print-directory -s corpus-baseline
	@bin/passnet $(PASSNET_FLAGS) --db $(DB) report --out $(OUT)/report
	@rm -rf $(OUT)/tasks
	@bin/passnet $(PASSNET_FLAGS) --db $(DB) export --out $(OUT)/tasks --tasks 200 --archive $(OUT)/tasks.tar.gz
	@bin/passnet $(PASSNET_FLAGS) --db $(DB) stats --brief
	@echo "store: $(DB); report: $(OUT)/report/index.html; task set: $(OUT)/tasks (and $(OUT)/tasks.tar.gz)"

# ORT as `make ort` installs it, best effort: offline, without npm or with
# the registry down the job goes on, and baseline, the report and stats say
# the baseline was not measured.  The install is bounded in time (npm
# retries a dead registry for minutes); passnet baseline finds the library
# in build/ort/ beside bin/ (or $$PASSNET_ORT_LIB).
ORT_INSTALL_TIMEOUT ?= 300
corpus-baseline:
	@timeout $(ORT_INSTALL_TIMEOUT) $(MAKE) --no-print-directory -s ort >/dev/null 2>&1 || \
	  echo "make corpus: ONNX Runtime could not be installed (make ort says why); the baseline is not measured"
	@bin/passnet $(PASSNET_FLAGS) --db $(DB) baseline --budget $(BASELINE_BUDGET) || true

# --- benchmarks ----------------------------------------------------------------

# CORPUS=DIR: the corpus (models/ and zoo/) the benchmarks read; without it,
# the fixture corpus (tests/fixtures/corpus.sh builds it once).  docs/
# benchmarks.md gives each figure with the corpus it was measured on.
CORPUS ?=
BENCH_CORPUS = c="$(CORPUS)"; [ -n "$$c" ] || c=$$(tests/fixtures/corpus.sh) || exit 1;
bench-extract: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all
	@$(BENCH_CORPUS) bench/extract.sh "$$c" /usr/share/libonnx-testdata/data

bench-dedup: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all
	@$(BENCH_CORPUS) bench/dedup.sh "$$c" /usr/share/libonnx-testdata/data

# passnet against the Python script a user would write instead (bench/peer.py:
# python3-onnx, hashlib, python3-lmdb), same models, same work, cold processes.
DEB_PEER := python3-onnx python3-lmdb
bench-peer: deps
	@missing=""; for p in $(DEB_PEER); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
	@$(MAKE) --no-print-directory -j$(NPROC) all
	@$(BENCH_CORPUS) bench/peer.sh "$$c/models"

# passnet's executor against ONNX Runtime (onnxruntime-node from npm, CPU,
# 1 thread each) on a sample of the corpus's fusion subgraphs; N, TRIALS,
# WARMUP, RTOL, ATOL, KEEP as bench/ort.sh describes.
bench-ort: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all build/bench/ort_time
	@command -v node >/dev/null || { echo "bench-ort needs node and npm (node >= 18)"; exit 1; }
	@$(BENCH_CORPUS) bench/ort.sh "$$c"

# The adaptive timing protocol against the full one (bench/protocol.sh): the
# same sample of N subgraphs (default 2000) profiled full, adaptive, full;
# runs per subgraph, subgraphs/s, flag and median agreement.
bench-protocol: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all
	@$(BENCH_CORPUS) bench/protocol.sh "$$c"

# Whole trained models on passnet and on ORT's C API, 1 thread each
# (bench/ort_models.sh: the npm trained models of data-manifest.txt, and
# CORPUS's models whose weights are in their files)
bench-ort-models: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all build/bench/ort_time
	@command -v node >/dev/null || { echo "bench-ort-models needs node and npm (node >= 18)"; exit 1; }
	@bench/ort_models.sh $(CORPUS)

# Exported task variants per dtype (bench/ort_dtypes.sh: float32, float16,
# bfloat16 on passnet and on ORT, 1 thread; TASKS=40 BUDGET=120 KEEP=DIR)
# TorchScript archives of every torchvision architecture that traces, read
# by passnet: outputs against torch's, sole-op hashes against torch.onnx's
# export (bench/torchscript.sh; `time` measures the lowering).
bench-torchscript: deps
	@dpkg -s time >/dev/null 2>&1 || $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null
	@$(MAKE) --no-print-directory -j$(NPROC) all
	@bench/torchscript.sh $(MODELS)

bench-ort-dtypes: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all build/bench/ort_time
	@command -v node >/dev/null || { echo "bench-ort-dtypes needs node and npm (node >= 18)"; exit 1; }
	@bench/ort_dtypes.sh $(CORPUS)

# Kernel benchmarks against OpenBLAS.  Only these programs link it (never
# bin/passnet), so libopenblas-dev is installed here rather than by `deps`.
# BENCH_ARGS is passed on, e.g. BENCH_ARGS="-s 256,512 -j 1".
DEB_BENCH := libopenblas-dev
BENCH_ARGS ?=
bench-deps:
	@missing=""; for p in $(DEB_BENCH); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

build/bench/%: bench/%.c $(LIB_OBJ) | $(GEN_HDR)
	@mkdir -p build/bench
	$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) $< $(LIB_OBJ) $(LDLIBS) -lopenblas -o $@

bench-kernels: deps bench-deps
	@$(MAKE) --no-print-directory build/bench/gemm
	@build/bench/gemm $(BENCH_ARGS)

# A hub-like corpus of N models from real seeds (bench/scale/README.md),
# generated once per (N, SCALE_SEED) into build/scale/, then build, exec and
# export on it with one table row per stage.  SCALE_VARIANTS=0 also measures
# build with `--variants 0`; bench-scale-stages runs extract, partition and
# dedup one by one (time and peak RSS of each).
N ?= 1000
SCALE_SEED ?= 1
SCALE_SOURCES ?= $(if $(CORPUS),$(CORPUS)/models,\
                 /usr/share/libonnx-testdata/data/pytorch-converted $(HOME)/.cache/passnet)
build/bench/scale-gen: bench/scale/gen.c build/obj/common/arena.o build/obj/common/strmap.o \
                       build/obj/gen/onnx/onnx.pb-c.o | $(GEN_HDR)
	@mkdir -p build/bench
	@$(if $(Q),echo "  BENCH   $@")
	$(Q)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# passnet-mpi against one process on this machine (bench/mpi.sh)
bench-mpi: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all bin/passnet-mpi
	@$(BENCH_CORPUS) bench/mpi.sh "$$c/models" $(or $(RANKS),4) $(or $(SUBGRAPHS),200)

bench-scale: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all build/bench/scale-gen
	@N=$(N) SEED=$(SCALE_SEED) bench/scale/run.sh $(SCALE_SOURCES)

bench-scale-stages: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all build/bench/scale-gen
	@N=$(N) SEED=$(SCALE_SEED) STAGES=1 bench/scale/run.sh $(SCALE_SOURCES)

SERIES ?= 1000 10000 100000
bench-scale-series: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all build/bench/scale-gen
	@for n in $(SERIES); do N=$$n SEED=$(SCALE_SEED) bench/scale/run.sh $(SCALE_SOURCES) || exit 1; done; \
	bench/scale/series.sh $(SCALE_SEED) $(SERIES)

clean:
	rm -rf build bin

-include $(shell find build/obj build/fuzz/obj $(SAN)/obj $(TSAN)/obj -name '*.d' 2>/dev/null)
