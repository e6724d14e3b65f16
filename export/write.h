/*
 * write.h - writing a selection as an export directory (layout in
 * export.h), its MANIFEST.tsv, and optionally the same tree as a tar.gz.
 */
#ifndef PN_WRITE_H
#define PN_WRITE_H

#include <stdint.h>

#include "export/select.h"
#include "store/store.h"

typedef struct pn_export_opts {
	const char *out;        /* directory (created; must be empty or absent) */
	const char *archive;    /* also write DIR as this .tar.gz (NULL: no) */
	uint64_t seed;
	int threads;
	int max_variants;       /* variants per task, all dtypes (0: 10) */
} pn_export_opts;

/* written[i] (sel->n entries, caller's) gets the variants of task i that
 * were written (float32 and dtype variants, as export.h plans them): a
 * variant whose files cannot be made is left out, listed with its kind and
 * reason in DIR/left_out.tsv (export/left_out.h; a warning line only under
 * -v) and counted in *left_out, a task left with none is dropped from the
 * splits. */
int pn_write_export(pn_store *st, const pn_selection *sel, const pn_export_opts *o, int *written,
		    int *left_out, char *err);
/* Writes DIR/MANIFEST.tsv over every other file below DIR. */
int pn_write_manifest(const char *dir, char *err);
/* The tree below dir as a deterministic .tar.gz (sorted, zero times, no
 * owners). */
int pn_write_archive(const char *dir, const char *path, char *err);

#endif
