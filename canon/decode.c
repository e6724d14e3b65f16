/*
 * decode.c - canonical bytes -> ModelProto (see decode.h).  The reader
 * mirrors the writers in canon.c (structure) and labels.c (labels).
 */
#include "canon/decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "canon/canon.h"
#include "canon/form.h"
#include "canon/labels.h"
#include "schemas/tensor.h"
#include "runtime/session.h"

typedef struct reader {
	const uint8_t *p, *end;
	int bad;
} reader;

static uint64_t rd_varint(reader *r)
{
	uint64_t x = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (r->p >= r->end) {
			r->bad = 1;
			return 0;
		}
		uint8_t b = *r->p++;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return x;
	}
	r->bad = 1;
	return 0;
}

static int64_t rd_svarint(reader *r)
{
	uint64_t u = rd_varint(r);
	return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

static uint8_t rd_u8(reader *r)
{
	if (r->p >= r->end) {
		r->bad = 1;
		return 0;
	}
	return *r->p++;
}

static const uint8_t *rd_bytes(reader *r, size_t n)
{
	/* A reader over no bytes (the blob of a bad record) has p == NULL,
	 * and even p + 0 is undefined then (UBSan, from fuzzing). */
	if (!r->p || (size_t)(r->end - r->p) < n) {
		r->bad = 1;
		return NULL;
	}
	const uint8_t *q = r->p;
	r->p += n;
	return q;
}

/* A count of items that follow, each taking at least one byte: more than
 * the bytes left is a damaged record, refused before it sizes an
 * allocation (fuzzing found a few bytes asking for exabytes). */
static size_t rd_count(reader *r)
{
	uint64_t n = rd_varint(r);
	if (r->bad || n > (uint64_t)(r->end - r->p)) {
		r->bad = 1;
		return 0;
	}
	return (size_t)n;
}

static reader rd_blob(reader *r)
{
	size_t n = (size_t)rd_varint(r);
	const uint8_t *q = rd_bytes(r, n);
	reader sub = {q, q ? q + n : NULL, q == NULL};
	return sub;
}

static char *rd_str(reader *r, pn_arena *a)
{
	reader s = rd_blob(r);
	return s.bad ? NULL : pn_arena_strndup(a, (const char *)s.p, (size_t)(s.end - s.p));
}

/* --- the decoded form ------------------------------------------------------------ */

typedef struct dvalue {
	uint8_t kind;
	int32_t in_pos, out_pos;
	pn_type type;
	Onnx__TensorProto *data;   /* constants by value */
	int meta;                  /* a weight kept as metadata */
	char *name;
} dvalue;

typedef struct dnode {
	Onnx__NodeProto *proto;
	int nin, n_in;             /* operands (with captures), listed inputs */
	int32_t *in;
	int nout;
	int32_t *out;
	int meta_const;            /* a Constant whose value is a weight kept as
				      metadata (meta_constant) */
} dnode;

typedef struct dgraph {
	int nv, nn;
	dvalue *v;
	dnode *n;
} dgraph;

typedef struct ctx {
	pn_arena *a;
	char *err;
	Passnet__WeightMeta **metas;
	size_t n_metas;
	int for_onnx;          /* a file for ONNX tools: boundary ranks must be known */
	/* max version per domain, for opset_import */
	const char *domains[16];
	int64_t versions[16];
	int ndom;
} ctx;

static int parse_graph(ctx *c, reader *r, const char *prefix, const char *const *captured,
		       int n_captured, int *n_used, dgraph *g);
static Onnx__TensorProto *meta_initializer(ctx *c, const dvalue *v);

static void note_version(ctx *c, const char *domain, int64_t v)
{
	for (int i = 0; i < c->ndom; i++)
		if (!strcmp(c->domains[i], domain)) {
			if (v > c->versions[i])
				c->versions[i] = v;
			return;
		}
	if (c->ndom < 16) {
		c->domains[c->ndom] = domain;
		c->versions[c->ndom++] = v;
	}
}

static void rd_type(reader *r, pn_type *t)
{
	memset(t, 0, sizeof(*t));
	t->kind = rd_u8(r);
	if (t->kind == PN_KIND_OPTIONAL)
		t->elem_kind = rd_u8(r);
	t->dtype = (int32_t)rd_varint(r);
	t->rank = (int32_t)rd_svarint(r);
	if (t->rank > PN_MAX_RANK) {
		r->bad = 1;
		t->rank = 0;
	}
	for (int i = 0; i < t->rank; i++)
		t->dims[i] = rd_svarint(r);
}

/* A tensor label (labels.c pn_tensor_label) as a TensorProto. */
static Onnx__TensorProto *rd_tensor(ctx *c, reader *r, const char *name)
{
	Onnx__TensorProto *tp = pn_arena_alloc(c->a, sizeof(*tp));
	if (!tp)
		return NULL;
	onnx__tensor_proto__init(tp);
	tp->name = pn_arena_strdup(c->a, name);
	tp->has_data_type = 1;
	tp->data_type = (int32_t)rd_varint(r);
	tp->n_dims = (size_t)rd_varint(r);
	if (tp->n_dims > PN_MAX_RANK)
		return r->bad = 1, NULL;
	tp->dims = pn_arena_alloc(c->a, sizeof(int64_t) * (tp->n_dims + 1));
	if (!tp->dims)
		return r->bad = 1, NULL;
	int64_t numel = 1;
	for (size_t i = 0; i < tp->n_dims; i++) {
		tp->dims[i] = (int64_t)rd_varint(r);
		/* a damaged dim must not overflow the count (UB) */
		if (tp->dims[i] < 0 || (tp->dims[i] && numel > INT64_MAX / tp->dims[i]))
			return r->bad = 1, NULL;
		numel *= tp->dims[i];
	}
	if (!rd_u8(r) || r->bad)
		return r->bad ? NULL : tp;
	if (tp->data_type == PN_STRING) {
		if (numel > r->end - r->p)   /* as rd_count: a byte per string at least */
			return r->bad = 1, NULL;
		tp->n_string_data = (size_t)numel;
		tp->string_data = pn_arena_alloc(c->a, sizeof(ProtobufCBinaryData) * (size_t)(numel + 1));
		for (int64_t i = 0; i < numel && tp->string_data; i++) {
			reader s = rd_blob(r);
			tp->string_data[i].data = (uint8_t *)s.p;
			tp->string_data[i].len = (size_t)(s.end - s.p);
		}
		return tp;
	}
	if (numel > r->end - r->p)   /* a byte per element at least */
		return r->bad = 1, NULL;
	size_t n = (size_t)numel * pn_dtype_size(tp->data_type);
	const uint8_t *q = rd_bytes(r, n);
	if (!q)
		return NULL;
	tp->has_raw_data = 1;
	tp->raw_data.data = pn_arena_memdup(c->a, q, n);
	tp->raw_data.len = n;
	return tp;
}

/* --- attributes ------------------------------------------------------------------ */


static int rd_attr(ctx *c, reader *r, Onnx__AttributeProto *ap, const char *prefix)
{
	ap->has_type = 1;
	ap->type = (Onnx__AttributeProto__AttributeType)rd_u8(r);
	switch ((int)ap->type) {
	case PN_ATTR_FLOAT: {
		const uint8_t *q = rd_bytes(r, 4);
		if (q)
			memcpy(&ap->f, q, 4);
		ap->has_f = 1;
		break;
	}
	case PN_ATTR_INT:
		ap->i = rd_svarint(r);
		ap->has_i = 1;
		break;
	case PN_ATTR_STRING: {
		reader s = rd_blob(r);
		ap->has_s = 1;
		ap->s.data = (uint8_t *)s.p;
		ap->s.len = (size_t)(s.end - s.p);
		break;
	}
	case PN_ATTR_FLOATS:
		ap->n_floats = rd_count(r);
		ap->floats = pn_arena_alloc(c->a, sizeof(float) * (ap->n_floats + 1));
		for (size_t i = 0; i < ap->n_floats && ap->floats; i++) {
			const uint8_t *q = rd_bytes(r, 4);
			if (q)
				memcpy(&ap->floats[i], q, 4);
		}
		break;
	case PN_ATTR_INTS:
		ap->n_ints = rd_count(r);
		ap->ints = pn_arena_alloc(c->a, sizeof(int64_t) * (ap->n_ints + 1));
		for (size_t i = 0; i < ap->n_ints && ap->ints; i++)
			ap->ints[i] = rd_svarint(r);
		break;
	case PN_ATTR_STRINGS:
		ap->n_strings = rd_count(r);
		ap->strings = pn_arena_alloc(c->a, sizeof(ProtobufCBinaryData) * (ap->n_strings + 1));
		for (size_t i = 0; i < ap->n_strings && ap->strings; i++) {
			reader s = rd_blob(r);
			ap->strings[i].data = (uint8_t *)s.p;
			ap->strings[i].len = (size_t)(s.end - s.p);
		}
		break;
	case PN_ATTR_TENSOR:
		/* A weight kept as metadata has no bytes to write; only a
		 * Constant's value can be one (its node becomes an initializer
		 * of its output, parse_graph), which the caller checks. */
		if (r->p < r->end && *r->p == 0xff) {
			r->p++;
			ap->t = NULL;
			break;
		}
		ap->t = rd_tensor(c, r, "");
		break;
	case PN_ATTR_TENSORS:
		ap->n_tensors = rd_count(r);
		ap->tensors = pn_arena_alloc(c->a, sizeof(void *) * (ap->n_tensors + 1));
		for (size_t i = 0; i < ap->n_tensors && ap->tensors; i++)
			ap->tensors[i] = rd_tensor(c, r, "");
		break;
	case PN_ATTR_GRAPH:
	case PN_ATTR_GRAPHS:
		return pn_fail(c->err, "graph attributes are decoded by their node");
	case PN_ATTR_TYPE_PROTO: {
		pn_type t;
		rd_type(r, &t);
		(void)prefix;
		ap->tp = pn_type_to_proto(c->a, &t);
		break;
	}
	case PN_ATTR_SPARSE_TENSOR:
	case PN_ATTR_SPARSE_TENSORS:
	case PN_ATTR_TYPE_PROTOS:
		/* kinds the model decoder keeps without their value, and
		 * canon/labels.c writes as their type alone */
		break;
	default:
		return pn_fail(c->err, "unknown attribute type %d", (int)ap->type);
	}
	return r->bad ? pn_fail(c->err, "truncated attribute '%s'", ap->name) : 0;
}

/* --- values, nodes, graphs -------------------------------------------------------- */

static int rd_value(ctx *c, reader *r, dvalue *v, const char *name)
{
	v->kind = rd_u8(r);
	v->in_pos = (int32_t)rd_svarint(r);
	v->out_pos = (int32_t)rd_svarint(r);
	reader lb = rd_blob(r);
	if (lb.p < lb.end && *lb.p == 0xca) {   /* a body's captured value */
		memset(&v->type, 0, sizeof(v->type));
		v->type.rank = -1;
		lb.p++;
	} else {
		rd_type(&lb, &v->type);
	}
	v->name = pn_arena_strdup(c->a, name);
	if (v->kind == PN_CV_CONST) {
		uint8_t how = rd_u8(&lb);
		if (how == 1)
			v->data = rd_tensor(c, &lb, name);
		else
			v->meta = 1;
	}
	return r->bad || lb.bad ? pn_fail(c->err, "corrupt value label") : 0;
}

/* Decodes a node label into a NodeProto; graph attributes need the node's
 * captured operand names, so they are parsed once operands are known. */
typedef struct pending_graph {
	Onnx__AttributeProto *ap;
	reader body;
	int multi;
} pending_graph;

static int rd_node_label(ctx *c, reader lb, dnode *d, const char *name, pending_graph *pg, int *npg)
{
	Onnx__NodeProto *np = pn_arena_alloc(c->a, sizeof(*np));
	if (!np)
		return pn_fail(c->err, "out of memory");
	onnx__node_proto__init(np);
	np->name = pn_arena_strdup(c->a, name);
	np->domain = rd_str(&lb, c->a);
	np->op_type = rd_str(&lb, c->a);
	int64_t version = (int64_t)rd_varint(&lb);
	d->n_in = (int)rd_varint(&lb);
	rd_varint(&lb);   /* n_out: the structure has it too */
	note_version(c, np->domain ? np->domain : "", version);
	np->n_attribute = rd_count(&lb);
	np->attribute = pn_arena_alloc(c->a, sizeof(void *) * (np->n_attribute + 1));
	for (size_t i = 0; i < np->n_attribute && !lb.bad; i++) {
		Onnx__AttributeProto *ap = pn_arena_alloc(c->a, sizeof(*ap));
		onnx__attribute_proto__init(ap);
		ap->name = rd_str(&lb, c->a);
		np->attribute[i] = ap;
		uint8_t type = lb.p < lb.end ? *lb.p : 0;
		if (type == PN_ATTR_GRAPH || type == PN_ATTR_GRAPHS) {
			lb.p++;
			ap->has_type = 1;
			ap->type = (Onnx__AttributeProto__AttributeType)type;
			int count = type == PN_ATTR_GRAPHS ? (int)rd_count(&lb) : 1;
			for (int k = 0; k < count && *npg < 16; k++)
				pg[(*npg)++] = (pending_graph){ap, rd_blob(&lb), type == PN_ATTR_GRAPHS};
		} else if (rd_attr(c, &lb, ap, name)) {
			return -1;
		} else if (ap->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR && !ap->t) {
			int constant = np->op_type && !strcmp(np->op_type, "Constant") &&
				       (!np->domain || !*np->domain) && ap->name &&
				       !strcmp(ap->name, "value");
			if (!constant)
				return pn_fail(c->err, "attribute '%s' of %s holds a weight kept as metadata",
					       ap->name ? ap->name : "?", np->op_type ? np->op_type : "?");
			d->meta_const = 1;
		}
	}
	d->proto = np;
	return lb.bad ? pn_fail(c->err, "corrupt node label") : 0;
}

static Onnx__ValueInfoProto *value_info(ctx *c, const dvalue *v)
{
	Onnx__ValueInfoProto *vi = pn_arena_alloc(c->a, sizeof(*vi));
	if (!vi)
		return NULL;
	onnx__value_info_proto__init(vi);
	vi->name = v->name;
	vi->type = pn_type_to_proto(c->a, &v->type);
	return vi->type ? vi : NULL;
}

/* Nodes in a topological order, least canonical index first among ready. */
static int *topo_order(const dgraph *g)
{
	int *pending = calloc((size_t)g->nn + 1, sizeof(int));
	int *producer = malloc(sizeof(int) * (size_t)(g->nv + 1));
	int *order = malloc(sizeof(int) * (size_t)(g->nn + 1));
	uint8_t *done = calloc((size_t)g->nn + 1, 1);
	if (!pending || !producer || !order || !done) {
		free(pending);
		free(producer);
		free(done);
		free(order);
		return NULL;
	}
	for (int i = 0; i < g->nv; i++)
		producer[i] = -1;
	for (int n = 0; n < g->nn; n++)
		for (int k = 0; k < g->n[n].nout; k++)
			if (g->n[n].out[k] >= 0)
				producer[g->n[n].out[k]] = n;
	for (int n = 0; n < g->nn; n++)
		for (int k = 0; k < g->n[n].nin; k++)
			if (g->n[n].in[k] >= 0 && producer[g->n[n].in[k]] >= 0)
				pending[n]++;
	int k = 0;
	while (k < g->nn) {
		int pick = -1;
		for (int n = 0; n < g->nn && pick < 0; n++)
			if (!done[n] && !pending[n])
				pick = n;
		if (pick < 0)
			break;
		done[pick] = 1;
		order[k++] = pick;
		for (int n = 0; n < g->nn; n++)
			for (int q = 0; q < g->n[n].nin; q++)
				if (g->n[n].in[q] >= 0 && producer[g->n[n].in[q]] == pick)
					pending[n]--;
	}
	free(pending);
	free(producer);
	free(done);
	if (k < g->nn) {
		free(order);
		return NULL;
	}
	return order;
}

static Onnx__GraphProto *build_graph(ctx *c, const dgraph *g, const char *name, int nested);

static int decode_bodies(ctx *c, dgraph *g, pending_graph *pg, int npg, int node)
{
	dnode *d = &g->n[node];
	const char **caps = pn_arena_alloc(c->a, sizeof(char *) * (size_t)(d->nin + 1));
	int ncaps = 0;
	for (int k = d->n_in; k < d->nin; k++)
		caps[ncaps++] = d->in[k] >= 0 ? g->v[d->in[k]].name : "";
	int used = 0;   /* captures are consumed body by body, in attribute order */
	for (int i = 0; i < npg; i++) {
		dgraph body;
		reader br = pg[i].body;
		char prefix[256];
		snprintf(prefix, sizeof prefix, "%s_%s%d_", d->proto->name, pg[i].ap->name, i);
		int bcaps = 0;
		if (parse_graph(c, &br, prefix, caps + used, ncaps - used, &bcaps, &body))
			return -1;
		Onnx__GraphProto *gp = build_graph(c, &body, prefix, 1);
		used += bcaps;
		if (!gp)
			return -1;
		Onnx__AttributeProto *ap = pg[i].ap;
		if (pg[i].multi) {
			Onnx__GraphProto **list = pn_arena_alloc(c->a, sizeof(void *) * (ap->n_graphs + 2));
			if (ap->n_graphs)
				memcpy(list, ap->graphs, sizeof(void *) * ap->n_graphs);
			list[ap->n_graphs++] = gp;
			ap->graphs = list;
		} else {
			ap->g = gp;
		}
	}
	return 0;
}

/* A Constant whose value is a weight kept as metadata (a large constant
 * inside a nested graph, where constants stay nodes): its value attribute
 * states dtype and dims, from the Constant's output, with its bytes absent,
 * as the store keeps such a weight; the loader then regenerates it like any
 * other (model/onnx_decode.c), and the graph hashes back to the same key. */
static int meta_constant(ctx *c, dgraph *g, const dnode *d)
{
	if (d->nout != 1 || d->out[0] < 0)
		return pn_fail(c->err, "node '%s' (Constant) does not have one output", d->proto->name);
	dvalue *v = &g->v[d->out[0]];
	if (!v->type.dtype || v->type.rank < 0)
		return pn_fail(c->err, "node '%s' (Constant) holds a weight kept as metadata whose "
			       "type is unknown", d->proto->name);
	for (int k = 0; k < v->type.rank; k++)
		if (v->type.dims[k] < 0)
			return pn_fail(c->err, "node '%s' (Constant) holds a weight kept as metadata of "
				       "unknown dims", d->proto->name);
	Onnx__AttributeProto *ap = NULL;
	for (size_t i = 0; i < d->proto->n_attribute; i++)
		if (!strcmp(d->proto->attribute[i]->name, "value"))
			ap = d->proto->attribute[i];
	Onnx__TensorProto *tp = ap ? meta_initializer(c, v) : NULL;
	if (!tp)
		return pn_fail(c->err, "out of memory");
	ap->t = tp;
	return 0;
}

/* r holds exactly one canonical form (unwrapped).  For a nested graph,
 * captured[0..n_captured) are the outer names still to be taken by captured
 * values (inputs without a position), in canonical order; *n_used says how
 * many this graph took.  The names are given before the nodes are read, so
 * that a graph nested deeper, which captures one of these values again,
 * reads it by its outer name. */
static int parse_graph(ctx *c, reader *r, const char *prefix, const char *const *captured,
		       int n_captured, int *n_used, dgraph *g)
{
	reader body = *r;
	if (rd_u8(&body) != PN_CANON_VERSION)
		return pn_fail(c->err, "canonical form of an unknown format version");
	rd_u8(&body);   /* kind */
	g->nv = (int)rd_varint(&body);
	g->nn = (int)rd_varint(&body);
	if (body.bad || g->nv < 0 || g->nn < 0 || g->nv > 1 << 20 || g->nn > 1 << 20)
		return pn_fail(c->err, "corrupt canonical form");
	g->v = pn_arena_alloc(c->a, sizeof(dvalue) * (size_t)(g->nv + 1));
	g->n = pn_arena_alloc(c->a, sizeof(dnode) * (size_t)(g->nn + 1));
	if (!g->v || !g->n)
		return pn_fail(c->err, "out of memory");
	for (int i = 0; i < g->nv; i++) {
		char name[300];
		snprintf(name, sizeof name, "%sv%d", prefix, i);
		if (rd_value(c, &body, &g->v[i], name))
			return -1;
	}
	int cap = 0;
	for (int i = 0; captured && i < g->nv; i++)
		if (g->v[i].kind == PN_CV_INPUT && g->v[i].in_pos < 0) {
			if (cap >= n_captured)
				return pn_fail(c->err, "nested graph captures more values than its node has");
			g->v[i].name = (char *)captured[cap++];
		}
	if (n_used)
		*n_used = cap;
	for (int i = 0; i < g->nn; i++) {
		dnode *d = &g->n[i];
		char name[300];
		pending_graph pg[16];
		int npg = 0;
		snprintf(name, sizeof name, "%sn%d", prefix, i);
		reader lb = rd_blob(&body);
		if (rd_node_label(c, lb, d, name, pg, &npg))
			return -1;
		rd_u8(&body);   /* commutative flag */
		/* Counts and value numbers are checked before use: a damaged
		 * record must not size an allocation beyond its own bytes (each
		 * number takes one at least) nor index outside the values
		 * (fuzzing found an output number past them). */
		d->nin = (int)rd_varint(&body);
		if (d->nin < 0 || d->nin > body.end - body.p || d->n_in < 0 || d->n_in > d->nin)
			return pn_fail(c->err, "corrupt canonical form");   /* listed inputs are operands */
		d->in = pn_arena_alloc(c->a, sizeof(int32_t) * (size_t)(d->nin + 1));
		for (int k = 0; k < d->nin && d->in; k++)
			d->in[k] = (int32_t)rd_varint(&body) - 1;
		d->nout = (int)rd_varint(&body);
		if (d->nout < 0 || d->nout > body.end - body.p)
			return pn_fail(c->err, "corrupt canonical form");
		d->out = pn_arena_alloc(c->a, sizeof(int32_t) * (size_t)(d->nout + 1));
		for (int k = 0; k < d->nout && d->out; k++)
			d->out[k] = (int32_t)rd_varint(&body) - 1;
		if (body.bad || !d->in || !d->out)
			return pn_fail(c->err, "corrupt canonical form");
		for (int k = 0; k < d->nin; k++)
			if (d->in[k] < -1 || d->in[k] >= g->nv)
				return pn_fail(c->err, "corrupt canonical form");
		for (int k = 0; k < d->nout; k++)
			if (d->out[k] < -1 || d->out[k] >= g->nv)
				return pn_fail(c->err, "corrupt canonical form");
		if (d->meta_const && meta_constant(c, g, d))
			return -1;
		if (npg && decode_bodies(c, g, pg, npg, i))
			return -1;
	}
	return 0;
}

static void fill_node_io(ctx *c, const dgraph *g, dnode *d)
{
	Onnx__NodeProto *np = d->proto;
	np->n_input = (size_t)d->n_in;
	np->input = pn_arena_alloc(c->a, sizeof(char *) * (size_t)(d->n_in + 1));
	for (int k = 0; k < d->n_in; k++)
		np->input[k] = d->in[k] >= 0 ? g->v[d->in[k]].name : "";
	np->n_output = (size_t)d->nout;
	np->output = pn_arena_alloc(c->a, sizeof(char *) * (size_t)(d->nout + 1));
	for (int k = 0; k < d->nout; k++)
		np->output[k] = d->out[k] >= 0 ? g->v[d->out[k]].name : "";
}

static int add_meta(ctx *c, const dvalue *v)
{
	Passnet__WeightMeta *w = pn_arena_alloc(c->a, sizeof(*w));
	Passnet__WeightMeta **list = pn_arena_alloc(c->a, sizeof(void *) * (c->n_metas + 1));
	if (!w || !list)
		return -1;
	passnet__weight_meta__init(w);
	w->name = v->name;
	w->has_dtype = 1;
	w->dtype = v->type.dtype;
	if (c->n_metas)
		memcpy(list, c->metas, sizeof(void *) * c->n_metas);
	list[c->n_metas++] = w;
	c->metas = list;
	return 0;
}

/* A weight kept as metadata: a tensor (an initializer, or a Constant's
 * value) that states dtype and dims and whose bytes are absent, as the store
 * keeps them. */
static Onnx__TensorProto *meta_initializer(ctx *c, const dvalue *v)
{
	Onnx__TensorProto *tp = pn_arena_alloc(c->a, sizeof(*tp));
	if (!tp)
		return NULL;
	onnx__tensor_proto__init(tp);
	tp->name = v->name;
	tp->has_data_type = 1;
	tp->data_type = v->type.dtype;
	tp->n_dims = (size_t)(v->type.rank > 0 ? v->type.rank : 0);
	tp->dims = pn_arena_memdup(c->a, v->type.dims, sizeof(int64_t) * PN_MAX_RANK);
	tp->has_data_location = 1;
	tp->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	return add_meta(c, v) ? NULL : tp;
}

/* nested: a nested graph, whose captured values (inputs without a position,
 * named after the outer operands by parse_graph) are read, not declared. */
static Onnx__GraphProto *build_graph(ctx *c, const dgraph *g, const char *name, int nested)
{
	Onnx__GraphProto *gp = pn_arena_alloc(c->a, sizeof(*gp));
	int *order = topo_order(g);
	if (!gp || !order) {
		free(order);
		return pn_fail(c->err, "subgraph nodes do not form a DAG"), NULL;
	}
	onnx__graph_proto__init(gp);
	gp->name = pn_arena_strdup(c->a, name);
	size_t nv = (size_t)g->nv + 1;
	gp->input = pn_arena_alloc(c->a, sizeof(void *) * nv);
	gp->output = pn_arena_alloc(c->a, sizeof(void *) * nv);
	gp->initializer = pn_arena_alloc(c->a, sizeof(void *) * nv);
	gp->value_info = pn_arena_alloc(c->a, sizeof(void *) * nv);
	gp->node = pn_arena_alloc(c->a, sizeof(void *) * ((size_t)g->nn + 1));
	/* positional inputs/outputs keep their positions; sets keep canonical order */
	for (int i = 0; c->for_onnx && !nested && i < g->nv; i++)
		if ((g->v[i].kind == PN_CV_INPUT || g->v[i].out_pos >= 0) && g->v[i].type.rank < 0) {
			free(order);
			return pn_fail(c->err, "boundary value %s has unknown rank (it depends on data)",
				       g->v[i].name), NULL;
		}
	for (int pos = -1; pos < g->nv; pos++)
		for (int i = 0; i < g->nv; i++) {
			const dvalue *v = &g->v[i];
			if (v->kind == PN_CV_INPUT && v->in_pos == pos && (pos >= 0 || !nested))
				gp->input[gp->n_input++] = value_info(c, v);
		}
	for (int pos = 0; pos < g->nv; pos++)
		for (int i = 0; i < g->nv; i++)
			if (g->v[i].out_pos == pos)
				gp->output[gp->n_output++] = value_info(c, &g->v[i]);
	for (int i = 0; i < g->nv; i++) {
		const dvalue *v = &g->v[i];
		if (v->kind == PN_CV_CONST)
			gp->initializer[gp->n_initializer++] = v->data ? v->data : meta_initializer(c, v);
		else if (v->kind == PN_CV_INNER && v->out_pos < 0 &&
			 (v->type.dtype || v->type.kind != PN_KIND_TENSOR))
			gp->value_info[gp->n_value_info++] = value_info(c, v);
	}
	for (int i = 0; i < g->nn; i++) {
		dnode *d = &g->n[order[i]];
		fill_node_io(c, g, d);
		gp->node[gp->n_node++] = d->proto;
	}
	free(order);
	return gp;
}

Onnx__ModelProto *pn_canon_to_model(const uint8_t *bytes, size_t len, int for_onnx, pn_arena *a,
				    Passnet__WeightMeta ***metas, size_t *n_metas, char *err)
{
	ctx c = {.a = a, .err = err, .for_onnx = for_onnx};
	reader r = {bytes, bytes + len, 0};
	dgraph g;
	Onnx__ModelProto *mp = NULL;
	note_version(&c, "", 1);
	if (!parse_graph(&c, &r, "", NULL, 0, NULL, &g)) {
		Onnx__GraphProto *gp = build_graph(&c, &g, "subgraph", 0);
		mp = gp ? pn_arena_alloc(a, sizeof(*mp)) : NULL;
		if (mp) {
			onnx__model_proto__init(mp);
			mp->has_ir_version = 1;
			mp->ir_version = 8;
			mp->producer_name = "passnet";
			mp->graph = gp;
			mp->n_opset_import = (size_t)c.ndom;
			mp->opset_import = pn_arena_alloc(a, sizeof(void *) * (size_t)(c.ndom + 1));
			for (int i = 0; i < c.ndom; i++) {
				Onnx__OperatorSetIdProto *os = pn_arena_alloc(a, sizeof(*os));
				onnx__operator_set_id_proto__init(os);
				os->domain = (char *)c.domains[i];
				os->has_version = 1;
				os->version = c.versions[i];
				mp->opset_import[i] = os;
			}
		}
	}
	if (metas) {
		*metas = c.metas;
		*n_metas = c.n_metas;
	}
	return mp;
}

/* Gives decoded weight w the statistics of ws named as it is, copied into
 * arena a (ws may be freed once the model is built).  The dtype and dims
 * stay the canonical form's. */
static int take_stats(Passnet__WeightMeta *w, const pn_subgraph_weights *ws, pn_arena *a)
{
	const Passnet__WeightMeta *s = NULL;
	for (size_t i = 0; ws && i < ws->n && !s; i++)
		if (ws->w[i]->name && w->name && !strcmp(ws->w[i]->name, w->name))
			s = ws->w[i];
	if (!s)
		return 0;
	w->has_has_stats = 1;
	w->has_stats = s->has_stats;
	w->has_mean = w->has_std = w->has_min = w->has_max = 1;
	w->mean = s->mean;
	w->std = s->std;
	w->min = s->min;
	w->max = s->max;
	w->has_scale = s->has_scale;
	w->scale = s->scale;
	w->n_channel_mean = s->n_channel_mean;
	w->n_channel_std = s->n_channel_std;
	w->channel_mean = s->n_channel_mean
			  ? pn_arena_memdup(a, s->channel_mean, sizeof(float) * s->n_channel_mean)
			  : NULL;
	w->channel_std = s->n_channel_std
			 ? pn_arena_memdup(a, s->channel_std, sizeof(float) * s->n_channel_std)
			 : NULL;
	return (s->n_channel_mean && !w->channel_mean) || (s->n_channel_std && !w->channel_std)
	       ? -1 : 0;
}

int pn_subgraph_decode(const uint8_t *bytes, size_t len, int for_onnx, const pn_subgraph_weights *ws,
		       pn_model **out, Onnx__ModelProto **proto, char *err)
{
	pn_model *m = pn_model_new();
	if (!m)
		return pn_fail(err, "out of memory");
	Passnet__WeightMeta **metas = NULL;
	size_t nm = 0;
	Onnx__ModelProto *mp = pn_canon_to_model(bytes, len, for_onnx, &m->arena, &metas, &nm, err);
	for (size_t i = 0; mp && ws && i < nm; i++)
		if (take_stats(metas[i], ws, &m->arena))
			mp = NULL, pn_fail(err, "out of memory");
	/* The canonical form already decided what is kept by value (folded
	 * constants of any size) and what is metadata (bytes absent): no
	 * policy is applied again. */
	pn_decode_opts o = {.weights_as_meta = 0, .metas = metas, .n_metas = nm};
	if (!mp || pn_model_from_proto(mp, &o, m, err)) {
		pn_model_free(m);
		return -1;
	}
	if (proto)
		*proto = mp;
	*out = m;
	return 0;
}

int pn_subgraph_model(const uint8_t *bytes, size_t len, pn_model **out, char *err)
{
	return pn_subgraph_decode(bytes, len, 0, NULL, out, NULL, err);
}

int pn_subgraph_rehash(const pn_model *m, pn_key *key, char *err)
{
	const pn_graph *g = m->graph;
	pn_type *types = malloc(sizeof(pn_type) * (size_t)(g->n_inputs + 1));
	int32_t *all = malloc(sizeof(int32_t) * (size_t)(g->n_nodes + 1));
	if (!types || !all) {
		free(types);
		free(all);
		return pn_fail(err, "out of memory");
	}
	for (int i = 0; i < g->n_inputs; i++)
		types[i] = g->values[g->inputs[i]].type;
	for (int i = 0; i < g->n_nodes; i++)
		all[i] = i;
	pn_infer_result r;
	int rc = pn_infer_graph(g, NULL, types, &r, err);
	free(types);
	if (rc) {
		free(all);
		pn_errprefix(err, "its decoded graph does not infer");
		return -1;
	}
	pn_form f;
	rc = pn_form_of_cut(g, &r, all, g->n_nodes, &f, err);
	if (rc) {
		pn_errprefix(err, "cannot hash its decoded graph");
	} else {
		*key = f.hash;
		pn_form_free(&f);
	}
	free(all);
	pn_infer_result_free(&r);
	return rc;
}

int pn_subgraph_fill_weights(Onnx__ModelProto *mp, const pn_model *m, uint64_t seed,
			     pn_arena *a, char *err)
{
	const pn_graph *g = m->graph;
	for (int i = 0; i < g->n_inits; i++) {
		const pn_value *v = &g->values[g->inits[i]];
		if (!v->meta)
			continue;
		pn_tensor *t = pn_weight_regen(g, g->inits[i], seed, err);
		if (!t)
			return -1;
		for (size_t k = 0; k < mp->graph->n_initializer; k++) {
			Onnx__TensorProto *tp = mp->graph->initializer[k];
			if (strcmp(tp->name, v->name))
				continue;
			tp->has_data_location = 0;
			tp->has_raw_data = 1;
			tp->raw_data.len = pn_tensor_nbytes(t);
			tp->raw_data.data = pn_arena_memdup(a, t->data, tp->raw_data.len);
		}
		pn_tensor_free(t);
	}
	return 0;
}
