#!/bin/sh
# isa_builds.sh - the executor compiles, warnings as errors, for every x86
# instruction set it has a path for, not only the one this machine has.
#
# `make` builds with -march=native, so a machine with AVX-512 never compiles
# the AVX2 branches of runtime/ and one with AVX2 never compiles the AVX-512
# ones; a variable used by one branch only broke the build of the other once
# (gemm.c, row_aks).  The runtime/ sources are where the #if's on __AVX2__,
# __AVX512F__ and __F16C__ live, so each is compiled (syntax and front-end
# warnings, no code generated) for: plain x86-64 (the portable C loops),
# Haswell (AVX2, FMA, F16C) and x86-64-v4 (AVX-512).
set -u
cd "${ROOT:-$(dirname "$0")/../..}"
. tests/cli/lib.sh

PKGS="libarchive libprotobuf-c lmdb libxxhash nettle libcurl json-c"
pkgflags=$(pkg-config --cflags $PKGS)
[ -f build/gen/passnet.pb-c.h ] || fail "build/gen is not generated (run make first)"

srcs=$(find runtime -name '*.c' | sort)
nsrc=$(echo "$srcs" | wc -l)
[ "$nsrc" -gt 20 ] || fail "only $nsrc sources found under runtime/"

for arch in x86-64 haswell x86-64-v4; do
	out=$(for f in $srcs; do
		gcc -std=c11 -O2 -march=$arch -Wall -Wextra -Werror -fopenmp \
			-D_GNU_SOURCE -fno-trapping-math -Wno-format-truncation \
			-I. -Ibuild/gen $pkgflags -fsyntax-only "$f" 2>&1
	done)
	[ -z "$out" ] || fail "runtime/ does not compile for -march=$arch:
$(echo "$out" | head -20)"
	echo "ok: runtime/ ($nsrc sources) compiles for -march=$arch"
done
