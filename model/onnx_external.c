/*
 * onnx_external.c - loading tensors whose bytes live in files beside the
 * model (TensorProto.data_location = EXTERNAL).
 *
 * The location is always relative to the model's folder, inside archives
 * too.  An absolute location or one that climbs out with ".." is refused: a
 * model must not make passnet read /etc/passwd.  A file that is simply
 * absent is common (graphs shared without their weights) and leaves the
 * tensor as metadata only, with one warning on the model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "model/onnx.h"

typedef struct ext_file {
	char *location;
	void *data;        /* NULL: missing */
	size_t len;
	struct ext_file *next;
} ext_file;

typedef struct resolver {
	const pn_fileio *io;
	pn_model *m;
	pn_arena *a;
	ext_file *files;
	int missing;
	int warned;
	char *err;
} resolver;

static int location_is_safe(const char *loc)
{
	if (!*loc || loc[0] == '/' || loc[0] == '\\' || strchr(loc, ':'))
		return 0;
	for (const char *p = loc; *p;) {
		const char *q = p;
		while (*q && *q != '/' && *q != '\\')
			q++;
		if (q - p == 2 && p[0] == '.' && p[1] == '.')
			return 0;
		p = *q ? q + 1 : q;
	}
	return 1;
}

/* Each external file is read once per model, however many tensors share it. */
static ext_file *load_file(resolver *r, const char *loc)
{
	for (ext_file *f = r->files; f; f = f->next)
		if (!strcmp(f->location, loc))
			return f;
	ext_file *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->location = strdup(loc);
	int rc = r->io && r->io->read ? r->io->read(r->io->ud, loc, &f->data, &f->len, r->err) : 1;
	if (rc < 0) {
		free(f->location);
		free(f);
		return NULL;
	}
	f->next = r->files;
	r->files = f;
	return f;
}

static const char *entry(const Onnx__TensorProto *tp, const char *key)
{
	for (size_t i = 0; i < tp->n_external_data; i++)
		if (tp->external_data[i]->key && !strcmp(tp->external_data[i]->key, key))
			return tp->external_data[i]->value;
	return NULL;
}

static int parse_size(const char *s, size_t *out)
{
	if (!s)
		return 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || s[0] == '-')
		return -1;
	*out = (size_t)v;
	return 0;
}

static int resolve_tensor(resolver *r, Onnx__TensorProto *tp)
{
	if (!tp->has_data_location || tp->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
		return 0;
	const char *name = tp->name ? tp->name : "";
	const char *loc = entry(tp, "location");
	if (!loc)
		return pn_fail(r->err, "tensor '%s' is external but names no location", name);
	if (!location_is_safe(loc))
		return pn_fail(r->err, "tensor '%s': external data location '%s' is outside the "
			       "model's folder (refused)", name, loc);
	size_t off = 0, len = (size_t)-1;
	if (parse_size(entry(tp, "offset"), &off) || parse_size(entry(tp, "length"), &len))
		return pn_fail(r->err, "tensor '%s': bad external data offset/length", name);
	ext_file *f = load_file(r, loc);
	if (!f)
		return -1;
	if (!f->data) {
		r->missing++;
		if (!r->warned++)
			pn_model_warn(r->m, "external data file '%s' is missing: weights kept as "
				      "metadata only", loc);
		return 0;
	}
	if (off > f->len || (len != (size_t)-1 && len > f->len - off))
		return pn_fail(r->err, "tensor '%s': external data [%zu, +%zu) is past the end of "
			       "'%s' (%zu bytes)", name, off, len, loc, f->len);
	if (len == (size_t)-1)
		len = f->len - off;
	tp->has_raw_data = 1;
	tp->raw_data.len = len;
	tp->raw_data.data = pn_arena_memdup(r->a, (const uint8_t *)f->data + off, len);
	if (!tp->raw_data.data)
		return pn_fail(r->err, "out of memory for tensor '%s'", name);
	/* the bytes are inline now: a proto written from this one (the store's
	 * stripped copy, --write-model, export-onnx) must not point other
	 * runtimes at a file that is not beside it */
	tp->has_data_location = 0;
	tp->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT;
	tp->n_external_data = 0;
	tp->external_data = NULL;
	r->m->n_external_read++;
	return 0;
}

static int resolve_graph(resolver *r, Onnx__GraphProto *g);

static int resolve_attrs(resolver *r, Onnx__NodeProto *n)
{
	for (size_t i = 0; i < n->n_attribute; i++) {
		Onnx__AttributeProto *ap = n->attribute[i];
		if (ap->t && resolve_tensor(r, ap->t))
			return -1;
		for (size_t k = 0; k < ap->n_tensors; k++)
			if (resolve_tensor(r, ap->tensors[k]))
				return -1;
		if (ap->g && resolve_graph(r, ap->g))
			return -1;
		for (size_t k = 0; k < ap->n_graphs; k++)
			if (resolve_graph(r, ap->graphs[k]))
				return -1;
	}
	return 0;
}

static int resolve_graph(resolver *r, Onnx__GraphProto *g)
{
	for (size_t i = 0; i < g->n_initializer; i++)
		if (resolve_tensor(r, g->initializer[i]))
			return -1;
	for (size_t i = 0; i < g->n_node; i++)
		if (resolve_attrs(r, g->node[i]))
			return -1;
	return 0;
}

int pn_onnx_resolve_external(Onnx__ModelProto *mp, const pn_fileio *io, pn_model *m, char *err)
{
	resolver r = {.io = io, .m = m, .a = &m->arena, .err = err};
	int rc = resolve_graph(&r, mp->graph);
	while (r.files) {
		ext_file *next = r.files->next;
		free(r.files->data);
		free(r.files->location);
		free(r.files);
		r.files = next;
	}
	return rc < 0 ? -1 : r.missing;
}
