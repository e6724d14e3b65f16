/*
 * compress.h - one zstd frame in memory, made and read through libarchive
 * (its raw format with the zstd filter; passnet links no zstd of its own).
 *
 * For the store's large values that compress well: a model's graph is
 * mostly value and node names (store/records.h keeps graphs packed).  The
 * same bytes and level give the same frame with one libzstd, so a store
 * stays a function of its sources.
 */
#ifndef PN_COMPRESS_H
#define PN_COMPRESS_H

#include <stddef.h>

#include "common/buf.h"

/* Appends in[0..n) as one zstd frame at `level` to out: 0, or -1 with err
 * set (out of memory, or libarchive's own error).  No bytes pack to no
 * bytes (libarchive reads no empty frame back), which unpack to none. */
int pn_zstd_pack(const void *in, size_t n, int level, pn_buf *out, char *err);

/* Appends what the zstd frame in[0..n) holds to out: 0, 1 with err set
 * when in is not one whole zstd frame (corrupt, cut short, or another
 * format), -1 when out of memory. */
int pn_zstd_unpack(const void *in, size_t n, pn_buf *out, char *err);

#endif
