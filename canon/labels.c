/*
 * labels.c - see labels.h.
 */
#include "canon/labels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schemas/opschema.h"
#include "schemas/ops.h"

static void put_str(pn_buf *b, const char *s)
{
	pn_buf_blob(b, s ? s : "", s ? strlen(s) : 0);
}

/* Floats by their bits; every NaN becomes the one quiet NaN. */
static void put_f32(pn_buf *b, float f)
{
	uint32_t x;
	if (isnan(f))
		x = 0x7fc00000u;
	else
		memcpy(&x, &f, 4);
	pn_buf_put(b, &x, 4);
}

static void put_f64(pn_buf *b, double f)
{
	uint64_t x;
	if (isnan(f))
		x = 0x7ff8000000000000ull;
	else
		memcpy(&x, &f, 8);
	pn_buf_put(b, &x, 8);
}

void pn_tensor_label(const pn_tensor *t, pn_buf *b)
{
	pn_buf_varint(b, (uint64_t)t->dtype);
	pn_buf_varint(b, (uint64_t)t->rank);
	for (int i = 0; i < t->rank; i++)
		pn_buf_varint(b, (uint64_t)t->dims[i]);
	if (!t->data) {
		pn_buf_u8(b, 0);
		return;
	}
	pn_buf_u8(b, 1);
	if (t->dtype == PN_STRING) {
		for (int64_t i = 0; i < t->numel; i++)
			put_str(b, ((char *const *)t->data)[i]);
	} else if (t->dtype == PN_FLOAT || t->dtype == PN_COMPLEX64) {
		int64_t n = t->numel * (t->dtype == PN_COMPLEX64 ? 2 : 1);
		for (int64_t i = 0; i < n; i++)
			put_f32(b, ((const float *)t->data)[i]);
	} else if (t->dtype == PN_DOUBLE || t->dtype == PN_COMPLEX128) {
		int64_t n = t->numel * (t->dtype == PN_COMPLEX128 ? 2 : 1);
		for (int64_t i = 0; i < n; i++)
			put_f64(b, ((const double *)t->data)[i]);
	} else if (t->dtype == PN_FLOAT16 || t->dtype == PN_BFLOAT16) {
		for (int64_t i = 0; i < t->numel; i++) {
			uint16_t h = ((const uint16_t *)t->data)[i];
			int nan = t->dtype == PN_FLOAT16 ? (h & 0x7c00) == 0x7c00 && (h & 0x3ff)
							 : (h & 0x7f80) == 0x7f80 && (h & 0x7f);
			uint16_t q = t->dtype == PN_FLOAT16 ? 0x7e00 : 0x7fc0;
			pn_buf_put(b, nan ? &q : &h, 2);
		}
	} else {
		pn_buf_put(b, t->data, pn_tensor_nbytes(t));
	}
}

void pn_type_label(const pn_type *t, int mode, pn_buf *b)
{
	pn_buf_u8(b, t->kind);
	if (t->kind == PN_KIND_OPTIONAL)
		pn_buf_u8(b, t->elem_kind);
	if (mode == PN_LABEL_EXACT) {
		pn_buf_varint(b, (uint64_t)t->dtype);
		pn_buf_svarint(b, t->rank);
		for (int i = 0; i < t->rank; i++)
			pn_buf_svarint(b, t->dims[i]);
	} else {
		pn_buf_svarint(b, t->rank);
	}
}

/* --- attributes ---------------------------------------------------------------- */

typedef struct attr_ref {
	const char *name;
	const pn_attr *a;             /* set on the node, or */
	const pn_attr_default *d;     /* the default of its version */
} attr_ref;

static int cmp_attr_ref(const void *x, const void *y)
{
	return strcmp(((const attr_ref *)x)->name, ((const attr_ref *)y)->name);
}

/* "1 2 3" / "0x1p-1 ..." lists of the defaults table. */
static void put_default_list(pn_buf *b, const pn_attr_default *d)
{
	const char *p = d->s;
	int n = 0;
	pn_buf nb = {0};
	while (*p) {
		char *end;
		if (d->kind == PN_AD_INTS) {
			long long v = strtoll(p, &end, 10);
			if (end == p)
				break;
			pn_buf_svarint(&nb, v);
		} else if (d->kind == PN_AD_FLOATS) {
			float v = strtof(p, &end);
			if (end == p)
				break;
			put_f32(&nb, v);
		} else {
			end = (char *)p;
			while (*end && *end != ' ')
				end++;
			pn_buf_blob(&nb, p, (size_t)(end - p));
		}
		n++;
		p = end;
		while (*p == ' ')
			p++;
	}
	pn_buf_varint(b, (uint64_t)n);
	pn_buf_put(b, nb.p, nb.n);
	pn_buf_free(&nb);
}

static void put_default(pn_buf *b, const pn_attr_default *d)
{
	static const uint8_t type_of[] = {[PN_AD_FLOAT] = PN_ATTR_FLOAT, [PN_AD_INT] = PN_ATTR_INT,
					  [PN_AD_STRING] = PN_ATTR_STRING, [PN_AD_INTS] = PN_ATTR_INTS,
					  [PN_AD_FLOATS] = PN_ATTR_FLOATS,
					  [PN_AD_STRINGS] = PN_ATTR_STRINGS};
	pn_buf_u8(b, type_of[d->kind]);
	switch (d->kind) {
	case PN_AD_FLOAT: put_f32(b, (float)d->f); break;
	case PN_AD_INT: pn_buf_svarint(b, d->i); break;
	case PN_AD_STRING: put_str(b, d->s); break;
	default: put_default_list(b, d); break;
	}
}

/* Canonical bytes of one nested graph, its captures appended to caps. */
static int put_body(pn_buf *b, const pn_graph *g, int mode, const uint64_t *colour,
		    pn_captures *caps)
{
	int32_t *order = NULL;
	if (pn_body_canon(g, mode, colour, b, caps ? &order : NULL))
		return -1;
	if (!caps)
		return 0;
	int32_t *grown = order ? realloc(caps->v, sizeof(int32_t) * (size_t)(caps->n + g->n_outer + 1))
			       : NULL;
	if (!grown) {
		free(order);
		return -1;
	}
	caps->v = grown;
	for (int j = 0; j < g->n_outer; j++)
		caps->v[caps->n++] = g->values[order[j]].outer;
	free(order);
	return 0;
}

static int put_attr(pn_buf *b, const pn_attr *a, int mode, const uint64_t *colour,
		    pn_captures *caps)
{
	pn_buf_u8(b, (uint8_t)a->type);
	switch (a->type) {
	case PN_ATTR_FLOAT: put_f32(b, a->f); break;
	case PN_ATTR_INT: pn_buf_svarint(b, a->i); break;
	case PN_ATTR_STRING: pn_buf_blob(b, a->s, (size_t)a->s_len); break;
	case PN_ATTR_FLOATS:
		pn_buf_varint(b, (uint64_t)a->n);
		for (int i = 0; i < a->n; i++)
			put_f32(b, a->floats[i]);
		break;
	case PN_ATTR_INTS:
		pn_buf_varint(b, (uint64_t)a->n);
		for (int i = 0; i < a->n; i++)
			pn_buf_svarint(b, a->ints[i]);
		break;
	case PN_ATTR_STRINGS:
		pn_buf_varint(b, (uint64_t)a->n);
		for (int i = 0; i < a->n; i++)
			put_str(b, a->strings[i]);
		break;
	case PN_ATTR_TENSOR:
		if (a->t)
			pn_tensor_label(a->t, b);
		else
			pn_buf_u8(b, 0xff);   /* a weight kept as metadata */
		break;
	case PN_ATTR_TENSORS:
		pn_buf_varint(b, (uint64_t)a->n);
		for (int i = 0; i < a->n; i++)
			pn_tensor_label(a->tensors[i], b);
		break;
	case PN_ATTR_GRAPH:
		return put_body(b, a->g, mode, colour, caps);
	case PN_ATTR_GRAPHS:
		pn_buf_varint(b, (uint64_t)a->n);
		for (int i = 0; i < a->n; i++)
			if (put_body(b, a->graphs[i], mode, colour, caps))
				return -1;
		break;
	case PN_ATTR_TYPE_PROTO:
		pn_type_label(a->tp, PN_LABEL_EXACT, b);
		break;
	default:
		break;
	}
	return 0;
}

int pn_node_label(const pn_node *n, int mode, const uint64_t *colour, pn_buf *b,
		  pn_captures *caps)
{
	int version = pn_op_effective_version(n->op, n->opset);
	put_str(b, n->domain);
	put_str(b, n->op_type);
	pn_buf_varint(b, (uint64_t)version);
	pn_buf_varint(b, (uint64_t)n->n_in);
	pn_buf_varint(b, (uint64_t)n->n_out);
	const pn_attr_default *defs = NULL;
	int nd = n->op >= 0 ? pn_op_defaults(n->op, version, &defs) : 0;
	attr_ref *refs = calloc((size_t)(n->n_attr + nd + 1), sizeof(*refs));
	if (!refs)
		return -1;
	int nr = 0;
	for (int i = 0; i < n->n_attr; i++)
		refs[nr++] = (attr_ref){n->attrs[i].name, &n->attrs[i], NULL};
	for (int i = 0; i < nd; i++)
		if (!pn_attr_find(n, defs[i].name))
			refs[nr++] = (attr_ref){defs[i].name, NULL, &defs[i]};
	qsort(refs, (size_t)nr, sizeof(*refs), cmp_attr_ref);
	pn_buf_varint(b, (uint64_t)nr);
	int rc = 0;
	for (int i = 0; i < nr && !rc; i++) {
		put_str(b, refs[i].name);
		if (refs[i].a)
			rc = put_attr(b, refs[i].a, mode, colour, caps);
		else
			put_default(b, refs[i].d);
	}
	free(refs);
	return rc || b->oom ? -1 : 0;
}
