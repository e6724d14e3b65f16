/*
 * fuzz.h - what the harnesses share: the libFuzzer entry point's prototype
 * and, for the parsers that only take a path, the input as a file.
 *
 * Each harness (tests/fuzz/<what it reads>.c) defines LLVMFuzzerTestOneInput.
 * `make fuzz` links it with clang's libFuzzer and sanitizers; replay.c gives
 * the same function a main that feeds it files, so that `make test` replays
 * the seeds and regression inputs with gcc alone.
 */
#ifndef PN_FUZZ_H
#define PN_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Writes data into one memory file, reused by every call (no disk, no
 * file left behind), and returns a path that opens it from offset 0.
 * NULL if it cannot: the harness then skips the input. */
static inline const char *pn_fuzz_as_file(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	if (fd < 0) {
		fd = memfd_create("pn-fuzz", 0);
		if (fd < 0)
			return NULL;
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		return NULL;
	return path;
}

#endif
