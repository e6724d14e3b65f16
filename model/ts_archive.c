/*
 * ts_archive.c - a TorchScript archive as torch.jit.save writes it: a zip
 * whose members sit under one top folder (named after the file):
 *
 *   <top>/data.pkl          the module tree, pickled; tensors point at
 *   <top>/data/<key>        their storage's bytes
 *   <top>/constants.pkl     a tuple of traced constants (CONSTANTS.cN),
 *   <top>/constants/<key>   with their storages
 *   <top>/code/<path>.py    TorchScript source, one file per module path
 *   <top>/version           the format version
 *
 * The zip is read through libarchive from memory, every member at once
 * (TorchScript archives are read whole anyway: their weights are needed
 * for statistics).  Tensors are rebuilt from (storage, offset, size,
 * stride) as torch._utils._rebuild_tensor_v2 does, made contiguous, every
 * index checked against the storage before a byte is read.
 */
#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "model/torchscript.h"
#include "model/ts_internal.h"

#define ZIP_MAGIC "PK\003\004"

/* The storage classes torch pickles (torch.FloatStorage, ...) and their
 * ONNX dtypes. */
static const struct {
	const char *name;
	int dtype;
} storages[] = {
	{"FloatStorage", PN_FLOAT},   {"DoubleStorage", PN_DOUBLE}, {"HalfStorage", PN_FLOAT16},
	{"BFloat16Storage", PN_BFLOAT16}, {"LongStorage", PN_INT64}, {"IntStorage", PN_INT32},
	{"ShortStorage", PN_INT16},   {"CharStorage", PN_INT8},     {"ByteStorage", PN_UINT8},
	{"BoolStorage", PN_BOOL},
};

static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The central directory of a zip as [*at, *at + *size), from its end
 * record (and the zip64 one when the offsets overflowed 32 bits); 0 when
 * there is none (a truncated file). */
static int zip_central(const uint8_t *p, size_t len, size_t *at, size_t *size)
{
	if (len < 22)
		return 0;
	size_t lo = len > 22 + 65535 ? len - 22 - 65535 : 0;
	for (size_t i = len - 22 + 1; i-- > lo;) {
		if (memcmp(p + i, "PK\005\006", 4))
			continue;
		uint64_t off = le(p + i + 16, 4), sz = le(p + i + 12, 4);
		if ((off == 0xffffffffu || sz == 0xffffffffu) && i >= 20 && !memcmp(p + i - 20, "PK\006\007", 4)) {
			uint64_t z = le(p + i - 20 + 8, 8);
			if (z > len - 56 || memcmp(p + z, "PK\006\006", 4))
				return 0;
			sz = le(p + z + 40, 8);
			off = le(p + z + 48, 8);
		}
		if (off > len || sz > len - off)
			return 0;
		*at = (size_t)off;
		*size = (size_t)sz;
		return 1;
	}
	return 0;
}

/* 1 when some member the central directory lists ends in suffix. */
static int zip_has_suffix(const uint8_t *p, size_t len, const char *suffix)
{
	size_t at, size, sl = strlen(suffix);
	if (!zip_central(p, len, &at, &size))
		return 0;
	const uint8_t *e = p + at, *end = p + at + size;
	while (end - e >= 46 && !memcmp(e, "PK\001\002", 4)) {
		size_t nl = le(e + 28, 2), el = le(e + 30, 2), cl = le(e + 32, 2);
		if ((size_t)(end - e) < 46 + nl)
			return 0;
		if (nl >= sl && !memcmp(e + 46 + nl - sl, suffix, sl))
			return 1;
		if ((size_t)(end - e) < 46 + nl + el + cl)
			return 0;
		e += 46 + nl + el + cl;
	}
	return 0;
}

/* 1 when some local file header (a member's own, found even in a
 * truncated zip) names a path containing part. */
static int zip_local_has(const uint8_t *p, size_t len, const char *part)
{
	size_t pl = strlen(part);
	for (size_t i = 0; i + 30 <= len; i++) {
		if (p[i] != 'P' || p[i + 1] != 'K' || p[i + 2] != 3 || p[i + 3] != 4)
			continue;
		size_t nl = (size_t)p[i + 26] | (size_t)p[i + 27] << 8;
		if (i + 30 + nl > len)
			return 0;
		if (memmem(p + i + 30, nl, part, pl))
			return 1;
	}
	return 0;
}

int ts_archive_sniff(const void *bytes, size_t len)
{
	if (len < 4 || memcmp(bytes, ZIP_MAGIC, 4))
		return 0;
	if (zip_has_suffix(bytes, len, "/data.pkl") && zip_has_suffix(bytes, len, ".py"))
		return 1;
	/* a truncated archive has no central directory: its members' own
	 * headers still say what it is, so the reader can say what is wrong */
	return zip_local_has(bytes, len, "/code/__torch__") ||
	       (zip_local_has(bytes, len, "/data.pkl") && !ts_archive_other_kind(bytes, len));
}

const char *ts_archive_other_kind(const void *bytes, size_t len)
{
	if (len < 4 || memcmp(bytes, ZIP_MAGIC, 4))
		return NULL;
	if (zip_has_suffix(bytes, len, "/data.pkl") && !zip_has_suffix(bytes, len, ".py"))
		return "a torch.save file (weights or a state dict, no graph): nothing to partition";
	if (zip_has_suffix(bytes, len, "serialized_exported_program.json") ||
	    zip_has_suffix(bytes, len, "/archive_format"))
		return "a torch.export .pt2 archive: not read (its graph is an ExportedProgram, not TorchScript)";
	return NULL;
}

static int add_member(ts_archive *ar, int *cap, const char *name, const uint8_t *data, size_t len)
{
	if (ar->n == *cap) {
		int nc = *cap ? *cap * 2 : 64;
		ts_member *nm = pn_arena_alloc(ar->a, sizeof(*nm) * (size_t)nc);
		if (!nm)
			return -1;
		if (ar->n)
			memcpy(nm, ar->m, sizeof(*nm) * (size_t)ar->n);
		ar->m = nm;
		*cap = nc;
	}
	ar->m[ar->n++] = (ts_member){name, data, len};
	return 0;
}

/* The current member's bytes into the arena: *size of them when the zip
 * says how many, else read to its end in chunks, up to max bytes. */
static int read_data(struct archive *z, pn_arena *a, int64_t size, size_t max, uint8_t **out, int64_t *got)
{
	if (size >= 0) {
		uint8_t *buf = pn_arena_alloc(a, (size_t)size + 1);
		if (!buf || archive_read_data(z, buf, (size_t)size) != (la_ssize_t)size)
			return -1;
		*out = buf;
		*got = size;
		return 0;
	}
	size_t n = 0, cap = 0;
	uint8_t *tmp = NULL;
	for (;;) {
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 65536;
			uint8_t *t = nc <= max + 65536 ? realloc(tmp, nc) : NULL;
			if (!t) {
				free(tmp);
				return -1;
			}
			tmp = t;
			cap = nc;
		}
		la_ssize_t r = archive_read_data(z, tmp + n, cap - n);
		if (r < 0 || n + (size_t)r > max) {
			free(tmp);
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*out = pn_arena_memdup(a, tmp ? tmp : (uint8_t *)"", n + 1);
	free(tmp);
	*got = (int64_t)n;
	return *out ? 0 : -1;
}

/* Reads every regular member; names lose their top folder. */
static int read_members(ts_archive *ar, const void *bytes, size_t len, char *err)
{
	struct archive *z = archive_read_new();
	if (!z)
		return pn_fail(err, "out of memory");
	archive_read_support_format_zip(z);
	int rc = -1, n_cap = 0;
	if (archive_read_open_memory(z, bytes, len) != ARCHIVE_OK) {
		pn_fail(err, "not a readable zip: %s", archive_error_string(z));
		goto out;
	}
	struct archive_entry *e;
	int r;
	size_t total = 0;
	while ((r = archive_read_next_header(z, &e)) == ARCHIVE_OK) {
		const char *nm = archive_entry_pathname(e);
		if (!nm || archive_entry_filetype(e) != AE_IFREG)
			continue;
		const char *slash = strchr(nm, '/');
		const char *rel = slash ? slash + 1 : nm;
		int64_t sz = archive_entry_size_is_set(e) ? archive_entry_size(e) : -1;
		if (ar->n >= TS_LIMIT_MEMBERS) {
			pn_fail(err, "more than %d members", TS_LIMIT_MEMBERS);
			goto out;
		}
		/* members stored as torch writes them cannot be larger than the
		 * archive; a compressed one is held to 64 times it */
		size_t cap = len * 64 + (1u << 20);
		if (sz > (int64_t)cap || total + (size_t)(sz > 0 ? sz : 0) > cap) {
			pn_fail(err, "%s: member size %lld out of bounds", rel, (long long)sz);
			goto out;
		}
		uint8_t *buf;
		if (read_data(z, ar->a, sz, cap - total, &buf, &sz)) {
			pn_fail(err, "%s: %s", rel, archive_error_string(z) ? archive_error_string(z)
									: "truncated or unreadable member");
			goto out;
		}
		total += (size_t)sz;
		if (add_member(ar, &n_cap, pn_arena_strdup(ar->a, rel), buf, (size_t)sz)) {
			pn_fail(err, "out of memory");
			goto out;
		}
	}
	if (r != ARCHIVE_EOF) {
		pn_fail(err, "broken zip: %s", archive_error_string(z));
		goto out;
	}
	rc = 0;
out:
	archive_read_free(z);
	return rc;
}

const ts_member *ts_archive_find(const ts_archive *ar, const char *name)
{
	for (int i = 0; i < ar->n; i++)
		if (ar->m[i].name && !strcmp(ar->m[i].name, name))
			return &ar->m[i];
	return NULL;
}

int ts_archive_open(const void *bytes, size_t len, pn_arena *a, ts_archive *ar, char *err)
{
	memset(ar, 0, sizeof(*ar));
	ar->a = a;
	if (read_members(ar, bytes, len, err))
		return -1;
	const ts_member *d = ts_archive_find(ar, "data.pkl");
	if (!d)
		return pn_fail(err, "no data.pkl: not a TorchScript archive");
	if (pn_pickle_load(d->data, d->len, a, &ar->data, err)) {
		pn_errprefix(err, "data.pkl");
		return -1;
	}
	const ts_member *k = ts_archive_find(ar, "constants.pkl");
	if (k && pn_pickle_load(k->data, k->len, a, &ar->constants, err)) {
		pn_errprefix(err, "constants.pkl");
		return -1;
	}
	return 0;
}

static int storage_dtype(const pn_pkl *g)
{
	if (!g || g->kind != PN_PKL_GLOBAL || !g->name)
		return 0;
	for (size_t i = 0; i < sizeof storages / sizeof *storages; i++)
		if (!strcmp(g->name, storages[i].name))
			return storages[i].dtype;
	return 0;
}

static int pkl_int(const pn_pkl *v, int64_t *out)
{
	if (!v || (v->kind != PN_PKL_INT && v->kind != PN_PKL_BOOL))
		return 0;
	*out = v->i;
	return 1;
}

/* sizes or strides: a tuple of at most PN_MAX_RANK ints */
static int pkl_ints(const pn_pkl *v, int64_t *out, int *n)
{
	if (!v || v->kind != PN_PKL_TUPLE || v->n > PN_MAX_RANK)
		return 0;
	for (int i = 0; i < v->n; i++)
		if (!pkl_int(v->items[i], &out[i]))
			return 0;
	*n = v->n;
	return 1;
}

/* Copies the strided view into a fresh contiguous buffer, checking that
 * every element it reads lies inside the storage. */
static int gather(const uint8_t *src, size_t src_len, size_t es, int64_t off, const int64_t *size,
		  const int64_t *stride, int rank, uint8_t *dst, int64_t numel, char *err)
{
	/* the largest and smallest element offsets the view reaches */
	int64_t lo = off, hi = off;
	for (int d = 0; d < rank; d++) {
		if (size[d] == 0)
			return 0;
		int64_t span;
		if (__builtin_mul_overflow(size[d] - 1, stride[d], &span))
			return pn_fail(err, "tensor stride overflows");
		if (span < 0)
			lo += span;
		else
			hi += span;
	}
	if (lo < 0 || (numel && (uint64_t)hi >= src_len / es))
		return pn_fail(err, "tensor view reaches past its storage (%zu elements)", src_len / es);
	/* torch saves most tensors contiguous: one copy */
	int64_t want = 1;
	int contiguous = 1;
	for (int d = rank - 1; d >= 0; d--) {
		if (size[d] != 1 && stride[d] != want)
			contiguous = 0;
		want *= size[d];
	}
	if (contiguous) {
		memcpy(dst, src + (size_t)off * es, (size_t)numel * es);
		return 0;
	}
	int64_t idx[PN_MAX_RANK] = {0};
	for (int64_t k = 0; k < numel; k++) {
		int64_t at = off;
		for (int d = 0; d < rank; d++)
			at += idx[d] * stride[d];
		memcpy(dst + (size_t)k * es, src + (size_t)at * es, es);
		for (int d = rank - 1; d >= 0; d--) {
			if (++idx[d] < size[d])
				break;
			idx[d] = 0;
		}
	}
	return 0;
}

int ts_archive_tensor(ts_archive *ar, const pn_pkl *obj, const char *folder, pn_tensor *out,
		      char *err)
{
	if (obj && obj->kind == PN_PKL_OBJECT && pn_pkl_is_global(obj->fn, "torch._utils", "_rebuild_parameter") &&
	    obj->args && obj->args->kind == PN_PKL_TUPLE && obj->args->n >= 1)
		obj = obj->args->items[0];
	if (!obj || obj->kind != PN_PKL_OBJECT || !pn_pkl_is_global(obj->fn, "torch._utils", "_rebuild_tensor_v2"))
		return 1;
	const pn_pkl *args = obj->args;
	if (!args || args->kind != PN_PKL_TUPLE || args->n < 4)
		return pn_fail(err, "_rebuild_tensor_v2 with %d arguments", args ? args->n : 0);
	const pn_pkl *pid = args->items[0] && args->items[0]->kind == PN_PKL_PERSID ? args->items[0]->pid : NULL;
	if (!pid || pid->kind != PN_PKL_TUPLE || pid->n < 3 || !pid->items[2] ||
	    pid->items[2]->kind != PN_PKL_STR)
		return pn_fail(err, "tensor without a storage id");
	int dtype = storage_dtype(pid->items[1]);
	if (!dtype)
		return pn_fail(err, "tensor of an unknown storage type %s",
			       pid->items[1] && pid->items[1]->name ? pid->items[1]->name : "?");
	int64_t off, size[PN_MAX_RANK], stride[PN_MAX_RANK];
	int rank, srank;
	if (!pkl_int(args->items[1], &off) || !pkl_ints(args->items[2], size, &rank) ||
	    !pkl_ints(args->items[3], stride, &srank) || srank != rank || off < 0)
		return pn_fail(err, "tensor with a malformed offset, size or stride");
	int64_t numel = 1;
	for (int d = 0; d < rank; d++) {
		if (size[d] < 0 || (size[d] && numel > PN_MAX_NUMEL / size[d]))
			return pn_fail(err, "tensor size out of bounds");
		numel *= size[d];
	}
	char path[300];
	snprintf(path, sizeof path, "%s/%.200s", folder, pid->items[2]->s);
	const ts_member *m = ts_archive_find(ar, path);
	if (!m)
		return pn_fail(err, "tensor storage %s is missing", path);
	size_t es = pn_dtype_size(dtype);
	memset(out, 0, sizeof(*out));
	out->dtype = dtype;
	out->rank = rank;
	memcpy(out->dims, size, sizeof(int64_t) * (size_t)rank);
	out->numel = numel;
	if ((uint64_t)numel * es > m->len + 0u && numel)
		return pn_fail(err, "tensor of %lld elements in a storage of %zu bytes", (long long)numel, m->len);
	out->data = pn_arena_alloc(ar->a, (size_t)numel * es + 1);
	if (!out->data)
		return pn_fail(err, "out of memory");
	if (gather(m->data, m->len, es, off, size, stride, rank, out->data, numel, err))
		return -1;
	return 0;
}

/* "__torch__.a.b.C" -> file "code/__torch__/a/b.py", name "C". */
static int split_qual(pn_arena *a, const char *qual, char **file, const char **name)
{
	const char *dot = strrchr(qual, '.');
	if (!dot)
		return -1;
	*name = dot + 1;
	size_t ml = (size_t)(dot - qual);
	*file = pn_arena_alloc(a, ml + 10);
	if (!*file)
		return -1;
	memcpy(*file, "code/", 5);
	for (size_t i = 0; i < ml; i++)
		(*file)[5 + i] = qual[i] == '.' ? '/' : qual[i];
	memcpy(*file + 5 + ml, ".py", 4);
	return 0;
}

static pn_ts_file *code_file(ts_archive *ar, const char *path, char *err)
{
	for (int i = 0; i < ar->n_code; i++)
		if (!strcmp(ar->code_paths[i], path))
			return ar->code_files[i];
	const ts_member *m = ts_archive_find(ar, path);
	if (!m) {
		pn_fail(err, "%s is missing", path);
		return NULL;
	}
	pn_ts_file *f = pn_arena_alloc(ar->a, sizeof(*f));
	if (!f || pn_ts_parse((const char *)m->data, m->len, ar->a, f, err)) {
		if (f)
			pn_errprefix(err, "%s", path);
		else
			pn_fail(err, "out of memory");
		return NULL;
	}
	if (ar->n_code == ar->cap_code) {
		int nc = ar->cap_code ? ar->cap_code * 2 : 16;
		const char **np = pn_arena_alloc(ar->a, sizeof(char *) * (size_t)nc);
		pn_ts_file **nf = pn_arena_alloc(ar->a, sizeof(pn_ts_file *) * (size_t)nc);
		if (!np || !nf) {
			pn_fail(err, "out of memory");
			return NULL;
		}
		if (ar->n_code) {
			memcpy(np, ar->code_paths, sizeof(char *) * (size_t)ar->n_code);
			memcpy(nf, ar->code_files, sizeof(pn_ts_file *) * (size_t)ar->n_code);
		}
		ar->code_paths = np;
		ar->code_files = nf;
		ar->cap_code = nc;
	}
	ar->code_paths[ar->n_code] = path;
	ar->code_files[ar->n_code++] = f;
	return f;
}

const pn_ts_class *ts_archive_class(ts_archive *ar, const char *qual, char *err)
{
	char *file;
	const char *name;
	if (split_qual(ar->a, qual, &file, &name)) {
		pn_fail(err, "class %s: not a qualified name", qual);
		return NULL;
	}
	pn_ts_file *f = code_file(ar, file, err);
	if (!f)
		return NULL;
	for (int i = 0; i < f->n_classes; i++)
		if (!strcmp(f->classes[i].name, name))
			return &f->classes[i];
	*err = 0;
	return NULL;
}

const pn_ts_func *ts_archive_func(ts_archive *ar, const char *qual, char *err)
{
	char *file;
	const char *name;
	if (split_qual(ar->a, qual, &file, &name)) {
		pn_fail(err, "function %s: not a qualified name", qual);
		return NULL;
	}
	pn_ts_file *f = code_file(ar, file, err);
	if (!f)
		return NULL;
	for (int i = 0; i < f->n_funcs; i++)
		if (!strcmp(f->funcs[i].name, name))
			return &f->funcs[i];
	*err = 0;
	return NULL;
}

int pn_torchscript_sniff(const void *bytes, size_t len)
{
	return ts_archive_sniff(bytes, len);
}

const char *pn_torchscript_other(const void *bytes, size_t len)
{
	return ts_archive_other_kind(bytes, len);
}
