# passnet - build, dependencies, tests, corpus and benchmarks.
#
#   make              build bin/passnet
#   make deps         install the Debian packages passnet needs (apt-get)
#   make test         deps + build + every test (unit, CLI, conformance)
#   make corpus       deps + build + the main job on the default corpus
#   make bench-...    benchmarks; each prints its figures

CC      ?= gcc
PKGS    := libarchive libprotobuf-c lmdb libxxhash
ONNX_PROTO_DIR ?= /usr/include
OPT     ?= -O3 -march=native
CFLAGS  ?= $(OPT) -g
CFLAGS  += -std=c11 -Wall -Wextra -Werror -fopenmp -D_GNU_SOURCE -MMD -MP \
           -Wno-format-truncation \
           -I. -Ibuild/gen
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
LDLIBS  += $(PKG_LIBS) -lm
LDFLAGS += -fopenmp

# Debian packages: building, the store tools the tests read with, the test
# framework, and the oracles (ONNX backend tests, python3-onnx checker).
DEB_BUILD := gcc make pkg-config libarchive-dev libprotobuf-c-dev protobuf-c-compiler \
             liblmdb-dev libxxhash-dev libonnx-dev
DEB_TEST  := lmdb-utils libcmocka-dev libonnx-testdata python3-onnx python3-numpy \
             zip xz-utils bzip2
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

GEN_DIR   := build/gen
GEN_SRC   := $(GEN_DIR)/onnx/onnx.pb-c.c $(GEN_DIR)/passnet.pb-c.c $(GEN_DIR)/testdata.pb-c.c
GEN_HDR   := $(GEN_SRC:.c=.h)
LIB_DIRS  := common schemas extract store exec exec/ops partition dedup export cmd
LIB_SRC   := $(sort $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c)))
LIB_OBJ   := $(patsubst %.c,build/obj/%.o,$(LIB_SRC)) \
             $(patsubst $(GEN_DIR)/%.c,build/obj/gen/%.o,$(GEN_SRC))
UNIT_SRC  := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN  := $(patsubst tests/unit/%.c,build/tests/%,$(UNIT_SRC))

.PHONY: all deps test unit-test cli-test conformance-test corpus clean \
        bench-extract bench-kernels bench-deps
.SECONDARY: $(GEN_SRC) $(GEN_HDR)
all: bin/passnet

deps:
	@missing=""; for p in $(DEB_BUILD) $(DEB_TEST); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

$(GEN_DIR)/onnx/onnx.pb-c.c $(GEN_DIR)/onnx/onnx.pb-c.h &: $(ONNX_PROTO_DIR)/onnx/onnx.proto
	@mkdir -p $(GEN_DIR)
	protoc-c -I$(ONNX_PROTO_DIR) --c_out=$(GEN_DIR) onnx/onnx.proto

$(GEN_DIR)/%.pb-c.c $(GEN_DIR)/%.pb-c.h: schemas/%.proto $(GEN_DIR)/onnx/onnx.pb-c.h
	protoc-c -I$(ONNX_PROTO_DIR) -Ischemas --c_out=$(GEN_DIR) schemas/$*.proto

build/obj/gen/%.o: $(GEN_DIR)/%.c $(GEN_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -c $< -o $@

build/obj/%.o: %.c | $(GEN_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -c $< -o $@

# Objects are linked directly (no .a): kernels are reached through weak
# references from the op table, which would not pull archive members.
bin/passnet: build/obj/passnet.o $(LIB_OBJ)
	@mkdir -p bin
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

build/tests/%: tests/unit/%.c $(LIB_OBJ) | $(GEN_HDR)
	@mkdir -p build/tests
	$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) $< $(LIB_OBJ) $(LDLIBS) -lcmocka -o $@

# --- tests -------------------------------------------------------------------

test: deps
	@$(MAKE) --no-print-directory all $(UNIT_BIN)
	@tests/run-all.sh

unit-test: all $(UNIT_BIN)
	@tests/run-all.sh unit

cli-test: all
	@tests/run-all.sh cli

# --- the main job --------------------------------------------------------------

DB ?= passnet.lmdb
corpus: deps
	@$(MAKE) --no-print-directory all
	bin/passnet --db $(DB) extract --manifest data-manifest.txt
	bin/passnet --db $(DB) stats

# --- benchmarks ----------------------------------------------------------------

SHARED ?= ../shared/corpus
bench-extract: deps
	@$(MAKE) --no-print-directory all
	@bench/extract.sh $(SHARED) /usr/share/libonnx-testdata/data

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

clean:
	rm -rf build bin

-include $(shell find build/obj -name '*.d' 2>/dev/null)
