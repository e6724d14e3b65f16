/*
 * scratch_dir.h - a fresh directory under /tmp for a unit test's files (real
 * LMDB stores, archives), removed with everything in it at teardown.
 *
 *   char dir[64];
 *   if (scratch_dir_make(dir, sizeof dir, "store"))   (/tmp/pn-store-XXXXXX)
 *           return -1;
 *   ...
 *   scratch_dir_remove(dir);
 */
#ifndef PN_TEST_SCRATCH_DIR_H
#define PN_TEST_SCRATCH_DIR_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

static int scratch_dir_rm_entry(const char *path, const struct stat *st, int flag,
				struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* 0, or -1 when the directory could not be made. */
static inline int scratch_dir_make(char *dir, size_t cap, const char *what)
{
	int n = snprintf(dir, cap, "/tmp/pn-%s-XXXXXX", what);
	return n > 0 && (size_t)n < cap && mkdtemp(dir) ? 0 : -1;
}

/* Depth first, not following links: the directory and all it holds. */
static inline int scratch_dir_remove(const char *dir)
{
	return nftw(dir, scratch_dir_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
