/*
 * bench/scale/gen.c - a hub-like corpus of N models made from real seed
 * models, for `make bench-scale` (bench/scale/README.md describes the mix).
 *
 *   build/bench/scale-gen -n N [-s SEED] [-a PER_ARCHIVE] [-m MAX_SEED_BYTES]
 *                         -o OUTDIR SEED_PATH...
 *
 * SEED_PATH is an .onnx file or a folder searched for .onnx files (sorted by
 * path).  OUTDIR receives scale-00000.tar.gz, scale-00001.tar.gz, ... (each
 * PER_ARCHIVE models, default 1000) and manifest.tsv (one line per model:
 * index, kind, seed, what was changed).
 *
 * Determinism: model i depends only on (SEED, i) and the seed files, never on
 * N or on the thread count, so the corpus of N models is the first N models
 * of any larger one and the output is byte-identical for the same SEED and N
 * (tar entries carry a fixed mtime and owner; gzip headers carry no time).
 *
 * Weights: external weight files are never copied: a seed that keeps its
 * weights outside the .onnx becomes "weights as metadata only" (dtype and
 * dims known, bytes absent), as in the 71-model test corpus.  Inline weights
 * stay, except in seeds above MAX_SEED_BYTES (default 1 MiB of model.onnx),
 * whose inline weights of more than 4 KiB (initializers and Constant nodes)
 * are made references to a file the archives do not hold: every seed is
 * used, at the size of its graph.
 */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/arena.h"
#include "common/strmap.h"
#include "onnx/onnx.pb-c.h"

/* ------------------------------------------------------------------ rng */

/* splitmix64: one 64-bit state per model, seeded from (seed, index). */
typedef struct { uint64_t s; } rng_t;

static uint64_t rng_next(rng_t *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double rng_unit(rng_t *r) { return (rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }
static uint32_t rng_below(rng_t *r, uint32_t n) { return n ? (uint32_t)(rng_next(r) % n) : 0; }

static rng_t rng_for(uint64_t seed, uint64_t index)
{
	rng_t r = { seed * 0xd1342543de82ef95ULL + index };
	rng_next(&r);
	r.s ^= index * 0x9e3779b97f4a7c15ULL;
	return r;
}

/* ------------------------------------------------------ op version table */

/* The opsets at which each default-domain op changed, from the catalogue the
 * pipeline itself uses; an opset change is made only where no op used by the
 * model changed between the two opsets, so the meaning is kept. */
typedef struct { const char *op; const char *versions; } op_versions;
static const op_versions OP_VERSIONS[] = {
#define VERSIONS(op, domain, list) { #op, list },
#define DEFAULT(op, since, attr, kind, value)
#include "schemas/op_schemas.def"
#undef VERSIONS
#undef DEFAULT
};

static const char *op_version_list(const char *op)
{
	for (size_t i = 0; i < sizeof OP_VERSIONS / sizeof OP_VERSIONS[0]; i++)
		if (strcmp(OP_VERSIONS[i].op, op) == 0)
			return OP_VERSIONS[i].versions;
	return NULL;
}

/* 1 if `op` means the same at opsets a and b: it exists at min(a,b) and no
 * version falls in (min, max]. */
static int op_same_between(const char *op, int a, int b)
{
	const char *list = op_version_list(op);
	if (!list)
		return 0;
	int lo = a < b ? a : b, hi = a < b ? b : a, exists = 0;
	for (const char *p = list; *p;) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		if (v <= lo)
			exists = 1;
		if (v > lo && v <= hi)
			return 0;
		p = end;
	}
	return exists;
}

/* ------------------------------------------------------------ graph walk */

static int is_default_domain(const char *d) { return !d || !*d || strcmp(d, "ai.onnx") == 0; }

typedef void (*node_fn)(Onnx__NodeProto *n, void *ctx);

/* Calls fn on every node of g and of the graphs nested in its attributes. */
static void walk_nodes(Onnx__GraphProto *g, node_fn fn, void *ctx)
{
	for (size_t i = 0; i < g->n_node; i++) {
		Onnx__NodeProto *n = g->node[i];
		fn(n, ctx);
		for (size_t a = 0; a < n->n_attribute; a++) {
			Onnx__AttributeProto *at = n->attribute[a];
			if (at->g)
				walk_nodes(at->g, fn, ctx);
			for (size_t k = 0; k < at->n_graphs; k++)
				walk_nodes(at->graphs[k], fn, ctx);
		}
	}
}

static Onnx__AttributeProto *find_attr(Onnx__NodeProto *n, const char *name)
{
	for (size_t a = 0; a < n->n_attribute; a++)
		if (strcmp(n->attribute[a]->name, name) == 0)
			return n->attribute[a];
	return NULL;
}

static int64_t attr_int(Onnx__NodeProto *n, const char *name, int64_t dflt)
{
	Onnx__AttributeProto *a = find_attr(n, name);
	return a ? a->i : dflt;
}

/* Names a node reads, its nested graphs' (outer-scope) reads included. */
typedef struct { const char **names; size_t n, cap; pn_arena *arena; } name_list;

static void name_list_add(name_list *l, const char *s)
{
	if (!s || !*s)
		return;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		const char **p = pn_arena_alloc(l->arena, cap * sizeof *p);
		if (l->n)
			memcpy(p, l->names, l->n * sizeof *p);
		l->names = p;
		l->cap = cap;
	}
	l->names[l->n++] = s;
}

static void collect_inputs(Onnx__NodeProto *n, void *ctx)
{
	for (size_t k = 0; k < n->n_input; k++)
		name_list_add(ctx, n->input[k]);
}

static void node_reads(Onnx__NodeProto *n, name_list *out)
{
	collect_inputs(n, out);
	for (size_t a = 0; a < n->n_attribute; a++) {
		Onnx__AttributeProto *at = n->attribute[a];
		if (at->g)
			walk_nodes(at->g, collect_inputs, out);
		for (size_t k = 0; k < at->n_graphs; k++)
			walk_nodes(at->graphs[k], collect_inputs, out);
	}
}

/* ----------------------------------------------------------------- seeds */

typedef struct {
	char *path, *name;
	uint8_t *bytes;
	size_t size;
	int opset;              /* default-domain opset */
	int targets[8], n_targets; /* other opsets of the same meaning */
	int batch_rewritable;   /* every op per-sample, batch 1 at dim 0 */
	size_t n_nodes;
} seed_t;

typedef struct { seed_t *v; size_t n, cap; } seed_set;

static int default_opset(Onnx__ModelProto *m)
{
	for (size_t i = 0; i < m->n_opset_import; i++)
		if (is_default_domain(m->opset_import[i]->domain))
			return (int)m->opset_import[i]->version;
	return 0;
}

typedef struct { int from, to, ok; } opset_check;

static void check_op_opset(Onnx__NodeProto *n, void *ctx)
{
	opset_check *c = ctx;
	if (is_default_domain(n->domain) && !op_same_between(n->op_type, c->from, c->to))
		c->ok = 0;
}

/* Ops whose result for each sample depends only on that sample when the
 * batch is dim 0 and nothing in the graph spells the batch out. */
static int op_is_per_sample(Onnx__NodeProto *n)
{
	static const char *const plain[] = {
		"Conv", "ConvTranspose", "Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid",
		"HardSwish", "Clip", "BatchNormalization", "InstanceNormalization", "Add", "Sub",
		"Mul", "Div", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
		"Dropout", "Identity", "LRN", "Exp", "Log", "Sqrt", "Erf", "Pow", "Neg", "Abs",
		"Reciprocal", "Elu", "Selu", "Softplus", "Mish", NULL };
	if (!is_default_domain(n->domain))
		return 0;
	for (int i = 0; plain[i]; i++)
		if (strcmp(n->op_type, plain[i]) == 0)
			return 1;
	if (strcmp(n->op_type, "Flatten") == 0)
		return attr_int(n, "axis", 1) == 1;
	if (strcmp(n->op_type, "Gemm") == 0)
		return attr_int(n, "transA", 0) == 0;
	if (strcmp(n->op_type, "Concat") == 0)
		return attr_int(n, "axis", 0) >= 1;
	if (strcmp(n->op_type, "Softmax") == 0 || strcmp(n->op_type, "LogSoftmax") == 0)
		return attr_int(n, "axis", 1) >= 1 || !find_attr(n, "axis");
	return 0;
}

static int is_initializer(Onnx__GraphProto *g, const char *name)
{
	for (size_t i = 0; i < g->n_initializer; i++)
		if (strcmp(g->initializer[i]->name, name) == 0)
			return 1;
	return 0;
}

static Onnx__TensorShapeProto *value_shape(Onnx__ValueInfoProto *v)
{
	if (!v->type || v->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
		return NULL;
	return v->type->tensor_type ? v->type->tensor_type->shape : NULL;
}

static int batch_rewritable(Onnx__GraphProto *g)
{
	for (size_t i = 0; i < g->n_node; i++)
		if (!op_is_per_sample(g->node[i]))
			return 0;
	size_t inputs = 0;
	for (size_t i = 0; i < g->n_input; i++) {
		if (is_initializer(g, g->input[i]->name))
			continue;
		Onnx__TensorShapeProto *s = value_shape(g->input[i]);
		if (!s || s->n_dim < 2 || s->dim[0]->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ||
		    s->dim[0]->dim_value != 1)
			return 0;
		inputs++;
	}
	return inputs > 0;
}

static void seed_analyse(seed_t *s, Onnx__ModelProto *m)
{
	s->opset = default_opset(m);
	s->n_nodes = m->graph->n_node;
	s->batch_rewritable = batch_rewritable(m->graph);
	s->n_targets = 0;
	if (m->n_functions || !s->opset)
		return;
	for (int t = 11; t <= 17 && s->n_targets < 8; t++) {
		if (t == s->opset)
			continue;
		opset_check c = { s->opset, t, 1 };
		walk_nodes(m->graph, check_op_opset, &c);
		if (c.ok)
			s->targets[s->n_targets++] = t;
	}
}

static uint8_t *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	struct stat st;
	uint8_t *buf = NULL;
	if (fstat(fileno(f), &st) == 0 && (buf = malloc(st.st_size ? st.st_size : 1)) &&
	    fread(buf, 1, st.st_size, f) != (size_t)st.st_size) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*size = buf ? (size_t)st.st_size : 0;
	return buf;
}

/* A seed's name: its folder's name for .../NAME/model.onnx, else the file's. */
static char *seed_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	if (strcmp(base, "model.onnx") == 0 && slash && slash > path) {
		const char *p = slash - 1;
		while (p > path && p[-1] != '/')
			p--;
		return strndup(p, slash - p);
	}
	size_t n = strlen(base);
	return strndup(base, n > 5 && strcmp(base + n - 5, ".onnx") == 0 ? n - 5 : n);
}

/* Makes t, when its inline bytes are above 4 KiB, a reference to a file
 * the archive will not hold: dtype and dims stay, the bytes go. */
static void tensor_as_metadata(Onnx__TensorProto *t, pn_arena *a)
{
	if (!t || !t->has_raw_data || t->raw_data.len <= 4096)
		return;
	Onnx__StringStringEntryProto **e = pn_arena_alloc(a, 3 * sizeof *e);
	const char *keys[3] = {"location", "offset", "length"};
	char *len = pn_arena_alloc(a, 24);
	snprintf(len, 24, "%zu", t->raw_data.len);
	const char *vals[3] = {"weights_not_shipped.bin", "0", len};
	for (int k = 0; k < 3; k++) {
		e[k] = pn_arena_alloc(a, sizeof **e);
		onnx__string_string_entry_proto__init(e[k]);
		e[k]->key = (char *)keys[k];
		e[k]->value = (char *)vals[k];
	}
	t->external_data = e;
	t->n_external_data = 3;
	t->has_data_location = 1;
	t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	t->has_raw_data = 0;
	t->raw_data.len = 0;
	t->raw_data.data = NULL;
}

/* Turns the large inline weights of m (initializers, and tensors of the
 * top-level nodes' attributes: quantized exports keep their weights in
 * Constant nodes) into metadata, so that the model is "weights as metadata
 * only" like the seeds whose weights were outside the .onnx from the
 * start.  Returns m packed (malloc'd). */
static uint8_t *weights_as_metadata(Onnx__ModelProto *m, pn_arena *a, size_t *size)
{
	Onnx__GraphProto *g = m->graph;
	for (size_t i = 0; i < g->n_initializer; i++)
		tensor_as_metadata(g->initializer[i], a);
	for (size_t i = 0; i < g->n_node; i++)
		for (size_t k = 0; k < g->node[i]->n_attribute; k++)
			tensor_as_metadata(g->node[i]->attribute[k]->t, a);
	*size = onnx__model_proto__get_packed_size(m);
	uint8_t *out = malloc(*size);
	if (out)
		onnx__model_proto__pack(m, out);
	return out;
}

static void seed_add(seed_set *set, const char *path, size_t max_bytes)
{
	size_t size;
	uint8_t *bytes = read_file(path, &size);
	if (!bytes) {
		fprintf(stderr, "scale-gen: %s: cannot read: %s\n", path, strerror(errno));
		return;
	}
	pn_arena arena;
	pn_arena_init(&arena, 0);
	ProtobufCAllocator alloc;
	pn_arena_protobuf_allocator(&arena, &alloc);
	Onnx__ModelProto *m = onnx__model_proto__unpack(&alloc, size, bytes);
	if (!m || !m->graph || !m->graph->n_node) {
		fprintf(stderr, "scale-gen: %s: not an ONNX model with a graph; skipped\n", path);
		free(bytes);
		pn_arena_free(&arena);
		return;
	}
	if (size > max_bytes) {   /* its weights become metadata; the graph stays */
		free(bytes);
		bytes = weights_as_metadata(m, &arena, &size);
		if (!bytes) {
			pn_arena_free(&arena);
			return;
		}
	}
	if (set->n == set->cap) {
		set->cap = set->cap ? 2 * set->cap : 64;
		set->v = realloc(set->v, set->cap * sizeof *set->v);
	}
	seed_t *s = &set->v[set->n++];
	*s = (seed_t){ strdup(path), seed_name(path), bytes, size, 0, {0}, 0, 0, 0 };
	seed_analyse(s, m);
	pn_arena_free(&arena);
}

typedef struct { char **v; size_t n, cap; } path_list;

static void path_add(path_list *l, const char *p)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->v = realloc(l->v, l->cap * sizeof *l->v);
	}
	l->v[l->n++] = strdup(p);
}

static void find_onnx(const char *path, path_list *out)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		fprintf(stderr, "scale-gen: %s: %s\n", path, strerror(errno));
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		path_add(out, path);
		return;
	}
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char *child;
		if (asprintf(&child, "%s/%s", path, e->d_name) < 0)
			continue;
		size_t n = strlen(e->d_name);
		if (stat(child, &st) == 0 &&
		    (S_ISDIR(st.st_mode) || (n > 5 && strcmp(e->d_name + n - 5, ".onnx") == 0)))
			find_onnx(child, out);
		free(child);
	}
	closedir(d);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* --------------------------------------------------------------- mutants */

typedef struct {
	pn_arena *arena;
	rng_t *rng;
	Onnx__ModelProto *m;
	char note[160];
} mutant;

/* Fine-tune: other weights.  The low byte of every element of each inline
 * floating-point initializer of more than 64 elements is XORed with a random
 * byte (exponent and sign untouched: values stay finite and close; tensors
 * of up to 16 floats are kept by value by the pipeline (model/onnx_weights.c),
 * so scalars, Clip bounds and small tables never change; shape
 * tensors and scalars are never touched). */
static size_t perturb_weights(mutant *mu)
{
	Onnx__GraphProto *g = mu->m->graph;
	size_t changed = 0;
	for (size_t i = 0; i < g->n_initializer; i++) {
		Onnx__TensorProto *t = g->initializer[i];
		int64_t elems = 1;
		for (size_t d = 0; d < t->n_dims; d++)
			elems *= t->dims[d];
		size_t es = t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT ? 4
			  : t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE ? 8
			  : t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 ? 2
			  : t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16 ? 2 : 0;
		if (!es || elems <= 64)
			continue;
		if (t->has_raw_data && t->raw_data.len == (size_t)elems * es) {
			for (size_t k = 0; k < t->raw_data.len; k += es)
				t->raw_data.data[k] ^= (uint8_t)rng_next(mu->rng);
			changed++;
		} else if (t->n_float_data == (size_t)elems) {
			for (size_t k = 0; k < t->n_float_data; k++) {
				uint32_t bits;
				memcpy(&bits, &t->float_data[k], 4);
				bits ^= (uint32_t)(rng_next(mu->rng) & 0xff);
				memcpy(&t->float_data[k], &bits, 4);
			}
			changed++;
		}
	}
	return changed;
}

/* Re-export, names: every value and node gets a new name, consistently in
 * every nested graph (a nested graph reads outer values by name). */
typedef struct {
	pn_strmap map;
	uint32_t next;
	char salt[8];
	pn_arena *arena;
} renamer;

static char *rename_value(renamer *r, char *old)
{
	if (!old || !*old)
		return old;
	int32_t k = pn_strmap_get(&r->map, old);
	if (k < 0) {
		k = (int32_t)r->next++;
		pn_strmap_put(&r->map, old, k);
	}
	return pn_arena_printf(r->arena, "%s_%d", r->salt, k);
}

static void rename_graph(renamer *r, Onnx__GraphProto *g, uint32_t *node_no)
{
	for (size_t i = 0; i < g->n_input; i++)
		g->input[i]->name = rename_value(r, g->input[i]->name);
	for (size_t i = 0; i < g->n_initializer; i++)
		g->initializer[i]->name = rename_value(r, g->initializer[i]->name);
	for (size_t i = 0; i < g->n_node; i++) {
		Onnx__NodeProto *n = g->node[i];
		for (size_t k = 0; k < n->n_input; k++)
			n->input[k] = rename_value(r, n->input[k]);
		for (size_t k = 0; k < n->n_output; k++)
			n->output[k] = rename_value(r, n->output[k]);
		n->name = pn_arena_printf(r->arena, "%s/%s_%u", r->salt, n->op_type, (*node_no)++);
		for (size_t a = 0; a < n->n_attribute; a++) {
			Onnx__AttributeProto *at = n->attribute[a];
			if (at->g)
				rename_graph(r, at->g, node_no);
			for (size_t k = 0; k < at->n_graphs; k++)
				rename_graph(r, at->graphs[k], node_no);
		}
	}
	for (size_t i = 0; i < g->n_output; i++)
		g->output[i]->name = rename_value(r, g->output[i]->name);
	for (size_t i = 0; i < g->n_value_info; i++)
		g->value_info[i]->name = rename_value(r, g->value_info[i]->name);
}

static void rename_all(mutant *mu)
{
	renamer r = { .arena = mu->arena };
	pn_strmap_init(&r.map, mu->arena, 4 * (uint32_t)mu->m->graph->n_node + 64);
	static const char *const styles[] = { "onnx::t", "/x", "val", "tensor", "h", "node" };
	snprintf(r.salt, sizeof r.salt, "%s%02x", styles[rng_below(mu->rng, 6)],
		 (unsigned)rng_below(mu->rng, 256));
	uint32_t node_no = 0;
	rename_graph(&r, mu->m->graph, &node_no);
}

/* Re-export, order: a random topological order of the top-level nodes (a
 * node with a nested graph also waits for the outer values that graph reads). */
static void reorder_nodes(mutant *mu)
{
	Onnx__GraphProto *g = mu->m->graph;
	size_t n = g->n_node;
	pn_strmap producer;
	pn_strmap_init(&producer, mu->arena, 2 * (uint32_t)n + 16);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < g->node[i]->n_output; k++)
			if (*g->node[i]->output[k])
				pn_strmap_put(&producer, g->node[i]->output[k], (int32_t)i);
	uint32_t *indeg = pn_arena_alloc(mu->arena, n * sizeof *indeg);
	uint32_t *first = pn_arena_alloc(mu->arena, (n + 1) * sizeof *first);
	name_list *reads = pn_arena_alloc(mu->arena, n * sizeof *reads);
	size_t edges = 0;
	for (size_t i = 0; i < n; i++) {
		reads[i] = (name_list){ .arena = mu->arena };
		node_reads(g->node[i], &reads[i]);
		edges += reads[i].n;
	}
	/* Edges producer -> consumer in CSR form, by producer. */
	uint32_t *count = pn_arena_alloc(mu->arena, (n + 1) * sizeof *count);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < reads[i].n; k++) {
			int32_t p = pn_strmap_get(&producer, reads[i].names[k]);
			if (p >= 0 && (size_t)p != i) {
				count[p]++;
				indeg[i]++;
			}
		}
	for (size_t i = 0; i < n; i++)
		first[i + 1] = first[i] + count[i];
	uint32_t *succ = pn_arena_alloc(mu->arena, (edges + 1) * sizeof *succ);
	memset(count, 0, (n + 1) * sizeof *count);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < reads[i].n; k++) {
			int32_t p = pn_strmap_get(&producer, reads[i].names[k]);
			if (p >= 0 && (size_t)p != i)
				succ[first[p] + count[p]++] = (uint32_t)i;
		}
	uint32_t *ready = pn_arena_alloc(mu->arena, n * sizeof *ready), n_ready = 0;
	Onnx__NodeProto **order = pn_arena_alloc(mu->arena, n * sizeof *order);
	size_t placed = 0;
	for (size_t i = 0; i < n; i++)
		if (!indeg[i])
			ready[n_ready++] = (uint32_t)i;
	while (n_ready) {
		uint32_t pick = rng_below(mu->rng, n_ready), v = ready[pick];
		ready[pick] = ready[--n_ready];
		order[placed++] = g->node[v];
		for (uint32_t e = first[v]; e < first[v + 1]; e++)
			if (--indeg[succ[e]] == 0)
				ready[n_ready++] = succ[e];
	}
	if (placed == n)  /* else a cycle or a name read twice: keep the order */
		memcpy(g->node, order, n * sizeof *order);
}

static void set_opset(Onnx__ModelProto *m, int opset)
{
	for (size_t i = 0; i < m->n_opset_import; i++)
		if (is_default_domain(m->opset_import[i]->domain))
			m->opset_import[i]->version = opset;
}

static void re_export(mutant *mu, const seed_t *s)
{
	rename_all(mu);
	reorder_nodes(mu);
	int opset = s->opset;
	if (s->n_targets && rng_below(mu->rng, 2)) {
		opset = s->targets[rng_below(mu->rng, (uint32_t)s->n_targets)];
		set_opset(mu->m, opset);
	}
	snprintf(mu->note, sizeof mu->note, "renamed, reordered, opset %d", opset);
}

/* Shape variant: another fixed batch at dim 0 of every input and output. */
static void set_batch(Onnx__GraphProto *g, int64_t batch)
{
	for (size_t i = 0; i < g->n_input; i++) {
		Onnx__TensorShapeProto *s = value_shape(g->input[i]);
		if (!is_initializer(g, g->input[i]->name) && s && s->n_dim)
			s->dim[0]->dim_value = batch;
	}
	for (size_t i = 0; i < g->n_output; i++) {
		Onnx__TensorShapeProto *s = value_shape(g->output[i]);
		if (s && s->n_dim && s->dim[0]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
			s->dim[0]->dim_value = batch;
	}
	g->n_value_info = 0;  /* the old shapes would contradict the new batch */
}

/* Element types along the top-level graph, for the outputs a truncation
 * makes (the checker and the pipeline want a typed output).  Most ops give
 * their first input's type; the table below names the others; 0 = unknown
 * (then that cut is not used). */
enum { T_FLOAT = 1, T_UINT8 = 2, T_INT32 = 6, T_INT64 = 7, T_BOOL = 9 };

static int32_t tensor_attr_type(Onnx__NodeProto *n, const char *name, int32_t dflt)
{
	Onnx__AttributeProto *a = find_attr(n, name);
	return a && a->t ? a->t->data_type : dflt;
}

static int op_in(const char *op, const char *const *list)
{
	for (int i = 0; list[i]; i++)
		if (strcmp(op, list[i]) == 0)
			return 1;
	return 0;
}

static int32_t output_type(Onnx__NodeProto *n, size_t out, const int32_t *in_type)
{
	static const char *const to_int64[] = { "Shape", "Size", "NonZero", "ArgMax", "ArgMin", NULL };
	static const char *const to_bool[] = { "Equal", "Less", "Greater", "LessOrEqual",
		"GreaterOrEqual", "Not", "And", "Or", "Xor", "IsNaN", "IsInf", NULL };
	static const char *const opaque[] = { "If", "Loop", "Scan", "Unique", "DynamicQuantizeLinear",
		"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
		"SequenceConstruct", "SplitToSequence", "SequenceAt", "ConcatFromSequence", "Optional",
		"OptionalGetElement", "StringNormalizer", "TfIdfVectorizer", "Bernoulli", NULL };
	const char *op = n->op_type;
	if (!is_default_domain(n->domain) || op_in(op, opaque))
		return 0;
	if (op_in(op, to_int64))
		return T_INT64;
	if (op_in(op, to_bool))
		return T_BOOL;
	if ((strcmp(op, "TopK") == 0 || strcmp(op, "MaxPool") == 0) && out == 1)
		return T_INT64;
	if (strcmp(op, "Dropout") == 0 && out == 1)
		return T_BOOL;
	if (strcmp(op, "Cast") == 0)
		return (int32_t)attr_int(n, "to", 0);
	if (strcmp(op, "CastLike") == 0 || strcmp(op, "Where") == 0)
		return n->n_input > 1 ? in_type[1] : 0;
	if (strcmp(op, "Constant") == 0)
		return tensor_attr_type(n, "value", find_attr(n, "value_ints") || find_attr(n, "value_int") ? T_INT64 : T_FLOAT);
	if (strcmp(op, "ConstantOfShape") == 0)
		return tensor_attr_type(n, "value", T_FLOAT);
	if (strcmp(op, "EyeLike") == 0)
		return find_attr(n, "dtype") ? (int32_t)attr_int(n, "dtype", 0) : in_type[0];
	if (strcmp(op, "DequantizeLinear") == 0)
		return T_FLOAT;
	if (strcmp(op, "QuantizeLinear") == 0)
		return n->n_input > 2 ? in_type[2] : T_UINT8;
	if (strcmp(op, "QLinearConv") == 0 || strcmp(op, "QLinearMatMul") == 0)
		return n->n_input > 7 ? in_type[7] : 0;
	if (strcmp(op, "ConvInteger") == 0 || strcmp(op, "MatMulInteger") == 0)
		return T_INT32;
	if (strcmp(op, "OneHot") == 0)
		return n->n_input > 2 ? in_type[2] : 0;
	return n->n_input ? in_type[0] : 0;
}

static int32_t value_elem_type(Onnx__ValueInfoProto *v)
{
	if (!v->type || v->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !v->type->tensor_type)
		return 0;
	return v->type->tensor_type->elem_type;
}

/* The element type of every value of g, by name (index into types). */
static void infer_types(pn_arena *arena, Onnx__GraphProto *g, pn_strmap *map, int32_t **types_out)
{
	size_t cap = g->n_input + g->n_initializer + 16;
	for (size_t i = 0; i < g->n_node; i++)
		cap += g->node[i]->n_output;
	int32_t *types = pn_arena_alloc(arena, cap * sizeof *types);
	int32_t next = 0;
	pn_strmap_init(map, arena, 2 * (uint32_t)cap);
	for (size_t i = 0; i < g->n_initializer; i++)
		if (pn_strmap_put(map, g->initializer[i]->name, next) == 0)
			types[next++] = g->initializer[i]->data_type;
	for (size_t i = 0; i < g->n_input; i++)
		if (pn_strmap_put(map, g->input[i]->name, next) == 0)
			types[next++] = value_elem_type(g->input[i]);
	int32_t in_type[16];
	for (size_t i = 0; i < g->n_node; i++) {
		Onnx__NodeProto *n = g->node[i];
		for (size_t k = 0; k < 16; k++) {
			int32_t id = k < n->n_input ? pn_strmap_get(map, n->input[k]) : -1;
			in_type[k] = id >= 0 ? types[id] : 0;
		}
		for (size_t k = 0; k < n->n_output; k++)
			if (*n->output[k] && pn_strmap_put(map, n->output[k], next) == 0)
				types[next++] = output_type(n, k, in_type);
	}
	*types_out = types;
}

static Onnx__ValueInfoProto *typed_output(pn_arena *arena, char *name, int32_t elem_type)
{
	Onnx__ValueInfoProto *vi = pn_arena_alloc(arena, sizeof *vi);
	Onnx__TypeProto *t = pn_arena_alloc(arena, sizeof *t);
	Onnx__TypeProto__Tensor *tt = pn_arena_alloc(arena, sizeof *tt);
	onnx__value_info_proto__init(vi);
	onnx__type_proto__init(t);
	onnx__type_proto__tensor__init(tt);
	tt->has_elem_type = 1;
	tt->elem_type = elem_type;
	t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	t->tensor_type = tt;
	vi->name = name;
	vi->type = t;
	return vi;
}

/* Structural variant: the first k nodes (in the file's topological order),
 * their frontier (values read by a dropped node, and kept outputs) made the
 * graph's outputs; unread initializers and inputs dropped. */
static int truncate_graph(mutant *mu, size_t k)
{
	Onnx__GraphProto *g = mu->m->graph;
	pn_strmap produced, read_kept, read_dropped, type_of;
	int32_t *types;
	uint32_t cap = 4 * (uint32_t)g->n_node + 16;
	infer_types(mu->arena, g, &type_of, &types);
	pn_strmap_init(&produced, mu->arena, cap);
	pn_strmap_init(&read_kept, mu->arena, cap);
	pn_strmap_init(&read_dropped, mu->arena, cap);
	for (size_t i = 0; i < g->n_node; i++) {
		name_list r = { .arena = mu->arena };
		node_reads(g->node[i], &r);
		for (size_t j = 0; j < r.n; j++)
			pn_strmap_put(i < k ? &read_kept : &read_dropped, r.names[j], 1);
		if (i < k)
			for (size_t j = 0; j < g->node[i]->n_output; j++)
				if (*g->node[i]->output[j])
					pn_strmap_put(&produced, g->node[i]->output[j], (int32_t)i);
	}
	size_t cap_out = g->n_output + 64, n_out = 0;
	Onnx__ValueInfoProto **outs = pn_arena_alloc(mu->arena, cap_out * sizeof *outs);
	for (size_t i = 0; i < g->n_output; i++)
		if (pn_strmap_get(&produced, g->output[i]->name) >= 0)
			outs[n_out++] = g->output[i];
	for (size_t i = 0; i < k; i++)
		for (size_t j = 0; j < g->node[i]->n_output; j++) {
			char *v = g->node[i]->output[j];
			if (!*v || pn_strmap_get(&read_dropped, v) < 0)
				continue;
			int dup = 0;
			for (size_t o = 0; o < n_out && !dup; o++)
				dup = strcmp(outs[o]->name, v) == 0;
			if (dup)
				continue;
			int32_t id = pn_strmap_get(&type_of, v);
			if (id < 0 || !types[id])
				return -1;  /* an output of unknown type: another cut */
			if (n_out == cap_out) {
				Onnx__ValueInfoProto **more = pn_arena_alloc(mu->arena, 2 * cap_out * sizeof *more);
				memcpy(more, outs, n_out * sizeof *outs);
				outs = more;
				cap_out *= 2;
			}
			outs[n_out++] = typed_output(mu->arena, v, types[id]);
		}
	if (!n_out)
		return -1;
	g->output = outs;
	g->n_output = n_out;
	g->n_node = k;
	size_t w = 0;
	for (size_t i = 0; i < g->n_initializer; i++)
		if (pn_strmap_get(&read_kept, g->initializer[i]->name) >= 0)
			g->initializer[w++] = g->initializer[i];
	g->n_initializer = w;
	w = 0;
	for (size_t i = 0; i < g->n_input; i++)
		if (pn_strmap_get(&read_kept, g->input[i]->name) >= 0)
			g->input[w++] = g->input[i];
	if (w)
		g->n_input = w;
	g->n_value_info = 0;
	return 0;
}

/* ------------------------------------------------------------ the mix */

enum kind { K_ORIGINAL, K_FINETUNE, K_REEXPORT, K_SHAPE, K_STRUCT, K_COUNT };
static const char *const KIND_NAME[K_COUNT] = { "original", "finetune", "reexport", "shape", "struct" };

/* The share of structural variants falls with the model's index: new
 * architectures' prefixes come in at a decreasing rate, as on a hub. */
static double struct_share(uint64_t i) { return 0.30 * sqrt(1000.0 / (1000.0 + (double)i)); }

typedef struct {
	const seed_set *seeds;
	double *zipf_cdf;      /* popularity of seeds, by rank in perm */
	uint32_t *perm;        /* rank -> seed */
	uint64_t seed;
} mix_t;

static uint32_t pick_seed(const mix_t *mx, rng_t *r)
{
	double u = rng_unit(r);
	size_t lo = 0, hi = mx->seeds->n - 1;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (mx->zipf_cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return mx->perm[lo];
}

static enum kind pick_kind(const seed_t *s, uint64_t i, rng_t *r)
{
	double u = rng_unit(r), ps = struct_share(i);
	if (u < ps && s->n_nodes > 4)
		return K_STRUCT;
	u = (u - ps) / (1.0 - ps);
	if (u < 0.55)
		return K_FINETUNE;
	if (u < 0.80)
		return K_REEXPORT;
	return s->batch_rewritable ? K_SHAPE : K_FINETUNE;
}

typedef struct { uint8_t *bytes; size_t size; char path[200]; char line[400]; enum kind kind; } model_out;

static void make_model(const mix_t *mx, uint64_t i, model_out *out)
{
	rng_t r = rng_for(mx->seed, i);
	const seed_set *seeds = mx->seeds;
	uint32_t si = i < seeds->n ? (uint32_t)i : pick_seed(mx, &r);
	const seed_t *s = &seeds->v[si];
	enum kind kind = i < seeds->n ? K_ORIGINAL : pick_kind(s, i, &r);
	out->kind = kind;
	snprintf(out->path, sizeof out->path, "m%07llu-%s-%s/model.onnx",
		 (unsigned long long)i, KIND_NAME[kind], s->name);
	if (kind == K_ORIGINAL) {
		out->bytes = malloc(s->size);
		memcpy(out->bytes, s->bytes, s->size);
		out->size = s->size;
		snprintf(out->line, sizeof out->line, "%llu\t%s\t%s\tthe seed as it is\n",
			 (unsigned long long)i, KIND_NAME[kind], s->name);
		return;
	}
	pn_arena arena;
	pn_arena_init(&arena, 0);
	ProtobufCAllocator alloc;
	pn_arena_protobuf_allocator(&arena, &alloc);
	mutant mu = { &arena, &r, onnx__model_proto__unpack(&alloc, s->size, s->bytes), "" };
	switch (kind) {
	case K_FINETUNE:
		snprintf(mu.note, sizeof mu.note, "%zu initializers perturbed", perturb_weights(&mu));
		break;
	case K_REEXPORT:
		re_export(&mu, s);
		break;
	case K_SHAPE: {
		static const int64_t batches[] = { 2, 3, 4, 8, 16, 32, 64 };
		int64_t b = batches[rng_below(&r, 7)];
		set_batch(mu.m->graph, b);
		snprintf(mu.note, sizeof mu.note, "batch %lld", (long long)b);
		break;
	}
	case K_STRUCT: {
		size_t n = s->n_nodes, lo = n / 5 ? n / 5 : 1, k = 0;
		int tries = 0;
		do
			k = lo + rng_below(&r, (uint32_t)(n - lo));
		while (truncate_graph(&mu, k) != 0 && ++tries < 8);
		if (tries < 8) {
			snprintf(mu.note, sizeof mu.note, "first %zu of %zu nodes", k, n);
			break;
		}
		/* no cut of known output types: a fine-tune instead */
		out->kind = kind = K_FINETUNE;
		snprintf(out->path, sizeof out->path, "m%07llu-%s-%s/model.onnx",
			 (unsigned long long)i, KIND_NAME[kind], s->name);
		snprintf(mu.note, sizeof mu.note, "%zu initializers perturbed", perturb_weights(&mu));
		break;
	}
	default:
		break;
	}
	/* Every upload is its own file, even where nothing inline changed. */
	mu.m->has_model_version = 1;
	mu.m->model_version = (int64_t)i + 1;
	out->size = onnx__model_proto__get_packed_size(mu.m);
	out->bytes = malloc(out->size ? out->size : 1);
	onnx__model_proto__pack(mu.m, out->bytes);
	snprintf(out->line, sizeof out->line, "%llu\t%s\t%s\t%s\n",
		 (unsigned long long)i, KIND_NAME[kind], s->name, mu.note);
	pn_arena_free(&arena);
}

/* ------------------------------------------------------------- archives */

static int write_archive(const mix_t *mx, const char *path, uint64_t from, uint64_t to,
			 char **lines, uint64_t *kinds)
{
	struct archive *a = archive_write_new();
	archive_write_set_format_ustar(a);
	archive_write_add_filter_gzip(a);
	archive_write_set_filter_option(a, "gzip", "timestamp", NULL);  /* no time in the header */
	if (archive_write_open_filename(a, path) != ARCHIVE_OK) {
		fprintf(stderr, "scale-gen: %s: %s\n", path, archive_error_string(a));
		archive_write_free(a);
		return -1;
	}
	size_t cap = 4096, len = 0;
	char *text = malloc(cap);
	text[0] = 0;
	for (uint64_t i = from; i < to; i++) {
		model_out m;
		make_model(mx, i, &m);
		kinds[m.kind]++;
		struct archive_entry *e = archive_entry_new();
		archive_entry_set_pathname(e, m.path);
		archive_entry_set_size(e, (la_int64_t)m.size);
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_perm(e, 0644);
		archive_entry_set_mtime(e, 1700000000, 0);
		archive_write_header(a, e);
		archive_write_data(a, m.bytes, m.size);
		archive_entry_free(e);
		free(m.bytes);
		size_t l = strlen(m.line);
		while (len + l + 1 > cap)
			text = realloc(text, cap *= 2);
		memcpy(text + len, m.line, l + 1);
		len += l;
	}
	int rc = archive_write_close(a) == ARCHIVE_OK ? 0 : -1;
	if (rc)
		fprintf(stderr, "scale-gen: %s: %s\n", path, archive_error_string(a));
	archive_write_free(a);
	*lines = text;
	return rc;
}

static void build_popularity(mix_t *mx)
{
	size_t n = mx->seeds->n;
	mx->perm = malloc(n * sizeof *mx->perm);
	mx->zipf_cdf = malloc(n * sizeof *mx->zipf_cdf);
	rng_t r = rng_for(mx->seed, UINT64_MAX);
	for (size_t i = 0; i < n; i++)
		mx->perm[i] = (uint32_t)i;
	for (size_t i = n - 1; i > 0; i--) {
		uint32_t j = rng_below(&r, (uint32_t)(i + 1)), t = mx->perm[i];
		mx->perm[i] = mx->perm[j];
		mx->perm[j] = t;
	}
	double total = 0;
	for (size_t i = 0; i < n; i++)
		total += 1.0 / (double)(i + 1);
	double acc = 0;
	for (size_t i = 0; i < n; i++) {
		acc += 1.0 / (double)(i + 1) / total;
		mx->zipf_cdf[i] = acc;
	}
	mx->zipf_cdf[n - 1] = 1.0;
}

static void usage(void)
{
	fprintf(stderr, "usage: scale-gen -n N [-s SEED] [-a PER_ARCHIVE] [-m MAX_SEED_BYTES] -o OUTDIR SEED_PATH...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	uint64_t n = 0, seed = 1, per = 1000, max_bytes = 1 << 20;
	const char *outdir = NULL;
	int argi = 1;
	for (; argi < argc && argv[argi][0] == '-'; argi += 2) {
		if (argi + 1 >= argc)
			usage();
		const char *v = argv[argi + 1];
		switch (argv[argi][1]) {
		case 'n': n = strtoull(v, NULL, 10); break;
		case 's': seed = strtoull(v, NULL, 10); break;
		case 'a': per = strtoull(v, NULL, 10); break;
		case 'm': max_bytes = strtoull(v, NULL, 10); break;
		case 'o': outdir = v; break;
		default: usage();
		}
	}
	if (!n || !per || !outdir || argi >= argc)
		usage();
	path_list paths = {0};
	for (; argi < argc; argi++)
		find_onnx(argv[argi], &paths);
	qsort(paths.v, paths.n, sizeof *paths.v, cmp_str);
	seed_set seeds = {0};
	for (size_t i = 0; i < paths.n; i++)
		seed_add(&seeds, paths.v[i], max_bytes);
	if (!seeds.n) {
		fprintf(stderr, "scale-gen: no seed model found\n");
		return 1;
	}
	mix_t mx = { &seeds, NULL, NULL, seed };
	build_popularity(&mx);
	mkdir(outdir, 0755);
	uint64_t n_arch = (n + per - 1) / per, kinds[K_COUNT] = {0};
	char **lines = calloc(n_arch, sizeof *lines);
	int failed = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(|:failed)
	for (uint64_t a = 0; a < n_arch; a++) {
		char path[4096];
		uint64_t local[K_COUNT] = {0};
		snprintf(path, sizeof path, "%s/scale-%05llu.tar.gz", outdir, (unsigned long long)a);
		uint64_t to = (a + 1) * per < n ? (a + 1) * per : n;
		failed |= write_archive(&mx, path, a * per, to, &lines[a], local) != 0;
#pragma omp critical
		for (int k = 0; k < K_COUNT; k++)
			kinds[k] += local[k];
	}
	char mpath[4096];
	snprintf(mpath, sizeof mpath, "%s/manifest.tsv", outdir);
	FILE *f = fopen(mpath, "w");
	if (!f) {
		fprintf(stderr, "scale-gen: %s: %s\n", mpath, strerror(errno));
		return 1;
	}
	fprintf(f, "index\tkind\tseed\tchange\n");
	for (uint64_t a = 0; a < n_arch; a++)
		fputs(lines[a] ? lines[a] : "", f);
	fclose(f);
	size_t rewritable = 0, reopset = 0;
	for (size_t i = 0; i < seeds.n; i++) {
		rewritable += seeds.v[i].batch_rewritable;
		reopset += seeds.v[i].n_targets > 0;
	}
	printf("scale-gen: %llu models from %zu seeds (%zu batch-rewritable, %zu with another opset of the same meaning) in %llu archives:",
	       (unsigned long long)n, seeds.n, rewritable, reopset, (unsigned long long)n_arch);
	for (int k = 0; k < K_COUNT; k++)
		printf(" %s %llu (%.1f%%)", KIND_NAME[k], (unsigned long long)kinds[k], 100.0 * kinds[k] / n);
	printf("\n");
	return failed;
}
