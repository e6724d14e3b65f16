/*
 * onnx_load.c - loading a model with everything it needs to run: external
 * weights from its folder and the test_data_set_N folders beside it.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/err.h"
#include "common/util.h"
#include "model/formats.h"
#include "model/onnx.h"

int pn_read_file(const char *path, void **data, size_t *len, char *err)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return errno == ENOENT ? 1 : pn_fail(err, "%s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		fclose(f);
		return pn_fail(err, "%s: not a regular file", path);
	}
	size_t n = (size_t)st.st_size;
	*data = malloc(n ? n : 1);
	if (!*data) {
		fclose(f);
		return pn_fail(err, "%s: out of memory (%zu bytes)", path, n);
	}
	if (n && fread(*data, 1, n, f) != n) {
		fclose(f);
		free(*data);
		*data = NULL;
		return pn_fail(err, "%s: read error", path);
	}
	fclose(f);
	*len = n;
	return 0;
}

static int dir_read(void *ud, const char *rel, void **data, size_t *len, char *err)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", (const char *)ud, rel);
	return pn_read_file(path, data, len, err);
}

static int dir_list(void *ud, const char *rel, char ***names, char *err)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", (const char *)ud, rel);
	DIR *dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? 0 : pn_fail(err, "%s: %s", path, strerror(errno));
	int n = 0, cap = 0;
	char **v = NULL;
	struct dirent *de;
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		char full[4352];
		struct stat st;
		snprintf(full, sizeof full, "%s/%s", path, de->d_name);
		int isdir = !stat(full, &st) && S_ISDIR(st.st_mode);
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			char **nv = realloc(v, sizeof(char *) * (size_t)cap);
			if (!nv)
				break;
			v = nv;
		}
		size_t l = strlen(de->d_name);
		v[n] = malloc(l + 2);
		if (!v[n])
			break;
		memcpy(v[n], de->d_name, l);
		v[n][l] = isdir ? '/' : 0;
		v[n][l + 1] = 0;
		n++;
	}
	closedir(dir);
	/* an empty folder (a test set with no files) leaves v NULL, which
	 * qsort must not be given even for 0 items (found by check_task) */
	if (n > 1)
		qsort(v, (size_t)n, sizeof(char *), pn_cmp_str);
	*names = v;
	return n;
}

const pn_fileio pn_dirio_template = {dir_read, dir_list, NULL};

pn_fileio pn_dirio(const char *dir)
{
	pn_fileio io = pn_dirio_template;
	io.ud = (void *)dir;
	return io;
}

/* "prefix_<N>.pb" -> N, or -1. */
static long indexed_name(const char *name, const char *prefix)
{
	size_t l = strlen(prefix);
	if (strncmp(name, prefix, l))
		return -1;
	char *end;
	long k = strtol(name + l, &end, 10);
	return end != name + l && !strcmp(end, ".pb") && k >= 0 && k < 4096 ? k : -1;
}

/* Kind of the k-th graph input (or output) of m, to read its file with. */
static int io_kind(const pn_model *m, int is_output, long k)
{
	const pn_graph *g = m->graph;
	int n = is_output ? g->n_outputs : g->n_inputs;
	if (k >= n)
		return PN_KIND_TENSOR;
	const pn_value *v = &g->values[is_output ? g->outputs[k] : g->inputs[k]];
	return v->type.kind;
}

/* ONNX 1.12's backend tests store bfloat16 tensors as uint16 (the same
 * bits): such a file takes the bfloat16 type its graph input/output declares. */
static void relabel_bf16(const pn_model *m, int is_output, long k, pn_tensor *t)
{
	const pn_graph *g = m->graph;
	int n = is_output ? g->n_outputs : g->n_inputs;
	if (!t || k >= n || t->kind != PN_KIND_TENSOR || t->dtype != PN_UINT16)
		return;
	if (g->values[is_output ? g->outputs[k] : g->inputs[k]].type.dtype == PN_BFLOAT16)
		t->dtype = PN_BFLOAT16;
}

static int load_one_set(pn_model *m, const pn_fileio *io, const char *dir, pn_testset *ts,
			char *err)
{
	char **names = NULL;
	int n = io->list(io->ud, dir, &names, err);
	if (n < 0)
		return -1;
	int rc = 0;
	pn_tensor **slots[2] = {NULL, NULL};
	int32_t counts[2] = {0, 0};
	for (int pass = 0; pass < 2 && !rc; pass++) {
		const char *prefix = pass ? "output_" : "input_";
		long hi = -1;
		for (int i = 0; i < n; i++) {
			long k = indexed_name(names[i], prefix);
			if (k > hi)
				hi = k;
		}
		counts[pass] = (int32_t)(hi + 1);
		slots[pass] = calloc((size_t)hi + 2, sizeof(pn_tensor *));
		for (int i = 0; i < n && !rc && slots[pass]; i++) {
			long k = indexed_name(names[i], prefix);
			if (k < 0)
				continue;
			char rel[1024];
			void *data = NULL;
			size_t len = 0;
			snprintf(rel, sizeof rel, "%s%s", dir, names[i]);
			rc = io->read(io->ud, rel, &data, &len, err) ? -1 : 0;
			if (!rc && pn_tensor_read_pb(data, len, io_kind(m, pass, k), &slots[pass][k],
						     NULL, err)) {
				pn_errprefix(err, "%s", rel);
				rc = -1;
			}
			if (!rc)
				relabel_bf16(m, pass, k, slots[pass][k]);
			free(data);
		}
		for (long k = 0; k <= hi && !rc; k++)
			if (!slots[pass][k])
				rc = pn_fail(err, "%s: %s%ld.pb is missing", dir, prefix, k);
	}
	pn_strv_free(names, n);
	ts->inputs = slots[0];
	ts->n_inputs = counts[0];
	ts->outputs = slots[1];
	ts->n_outputs = counts[1];
	return rc;
}

int pn_model_load_testsets(pn_model *m, const pn_fileio *io, char *err)
{
	char **names = NULL;
	int n = io->list ? io->list(io->ud, "", &names, err) : 0;
	if (n < 0)
		return -1;
	int rc = 0;
	for (int i = 0; i < n && !rc; i++) {
		size_t l = strlen(names[i]);
		if (strncmp(names[i], "test_data_set_", 14) || names[i][l - 1] != '/')
			continue;
		pn_testset *ts = pn_arena_alloc(&m->arena, sizeof(pn_testset) * (size_t)(m->n_testsets + 1));
		if (!ts) {
			rc = pn_fail(err, "out of memory");
			break;
		}
		if (m->n_testsets)
			memcpy(ts, m->testsets, sizeof(pn_testset) * (size_t)m->n_testsets);
		m->testsets = ts;
		rc = load_one_set(m, io, names[i], &ts[m->n_testsets], err);
		m->n_testsets++;
	}
	pn_strv_free(names, n);
	return rc;
}

int pn_model_load(const void *bytes, size_t len, const pn_fileio *io, int with_tests,
		  pn_model **out, char *err)
{
	pn_model *m = pn_model_new();
	if (!m)
		return pn_fail(err, "out of memory");
	Onnx__ModelProto *mp = pn_model_unpack(bytes, len, m, err);
	int rc = mp ? 0 : -1;
	if (!rc && pn_onnx_resolve_external(mp, io, m, err) < 0)
		rc = -1;
	if (!rc)
		rc = pn_model_from_proto(mp, NULL, m, err);
	if (!rc && with_tests && io)
		rc = pn_model_load_testsets(m, io, err);
	if (rc) {
		pn_model_free(m);
		return -1;
	}
	*out = m;
	return 0;
}

int pn_model_load_path(const char *path, int with_tests, pn_model **out, char *err)
{
	char file[4096], dir[4096];
	struct stat st;
	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		snprintf(dir, sizeof dir, "%s", path);
		snprintf(file, sizeof file, "%s/model.onnx", path);
	} else {
		snprintf(file, sizeof file, "%s", path);
		snprintf(dir, sizeof dir, "%s", path);
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = 0;
		else
			snprintf(dir, sizeof dir, ".");
	}
	void *data = NULL;
	size_t len = 0;
	int rc = pn_read_file(file, &data, &len, err);
	if (rc > 0)
		return pn_fail(err, "%s: no such file", file);
	if (rc < 0)
		return -1;
	pn_fileio io = pn_dirio(dir);
	rc = pn_model_load(data, len, &io, with_tests, out, err);
	free(data);
	if (rc)
		pn_errprefix(err, "%s", file);
	return rc;
}
