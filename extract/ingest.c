/*
 * ingest.c - see ingest.h.
 */
#include "model/formats.h"
#include "extract/ingest.h"

#include <stdlib.h>
#include <string.h>

#include "common/assert.h"
#include "common/util.h"
#include "extract/binding.h"
#include "extract/check_form.h"
#include "extract/generalize.h"
#include "extract/variant_memo.h"
#include "extract/variants.h"
#include "extract/run_gate.h"
#include "extract/weight_memo.h"
#include "extract/weight_scale.h"
#include "runtime/infer.h"
#include "store/store.h"

typedef struct ctx {
	pn_model *m;
	pn_arena *a;
	Passnet__Model *rec;
	char *err;
	int max_variants;
	int no_weight_check;
	pn_weight_memo *memo;
	pn_variant_memo *variant_memo;
	pn_ingest *out;
	const Onnx__ModelProto *proto;   /* as decoded, before stripping: for copies */
} ctx;

/* --- weights as metadata ----------------------------------------------------- */

/* The stripped tensor keeps its name, dtype and dims; its bytes are gone and
 * it says so by being EXTERNAL with no location (never resolved again). */
static void strip_tensor(Onnx__TensorProto *tp)
{
	tp->has_raw_data = 0;
	tp->n_float_data = tp->n_int32_data = tp->n_int64_data = 0;
	tp->n_double_data = tp->n_uint64_data = tp->n_string_data = 0;
	tp->n_external_data = 0;
	tp->has_data_location = 1;
	tp->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
}

static int add_meta(ctx *c, const pn_value *v)
{
	Passnet__WeightMeta *w = pn_arena_alloc(c->a, sizeof(*w));
	if (!w)
		return -1;
	passnet__weight_meta__init(w);
	w->name = (char *)v->name;
	w->has_dtype = 1;
	w->dtype = v->type.dtype;
	w->n_dims = (size_t)(v->type.rank > 0 ? v->type.rank : 0);
	w->dims = pn_arena_memdup(c->a, v->type.dims, sizeof(int64_t) * PN_MAX_RANK);
	w->has_has_stats = 1;
	w->has_stats = v->meta->has_stats;
	if (v->meta->has_stats) {
		w->has_mean = w->has_std = w->has_min = w->has_max = 1;
		w->mean = v->meta->mean;
		w->std = v->meta->std;
		w->min = v->meta->min;
		w->max = v->meta->max;
		w->n_channel_mean = (size_t)v->meta->n_channels;
		w->channel_mean = v->meta->ch_mean;
		w->n_channel_std = v->meta->ch_std ? (size_t)v->meta->n_channels : 0;
		w->channel_std = v->meta->ch_std;
	}
	/* a blind draw has a correction scale too (extract/weight_scale.h) */
	w->has_scale = v->meta->scale != 0 && v->meta->scale != 1;
	w->scale = v->meta->scale;
	Passnet__WeightMeta **list = pn_arena_alloc(c->a, sizeof(void *) * (c->rec->n_weights + 1));
	if (!list)
		return -1;
	if (c->rec->n_weights)
		memcpy(list, c->rec->weights, sizeof(void *) * c->rec->n_weights);
	list[c->rec->n_weights++] = w;
	c->rec->weights = list;
	return 0;
}

static int strip_graph(ctx *c, Onnx__GraphProto *gp, const pn_graph *g);

/* Walks the proto graph beside its IR (same node order, same attribute
 * order) and strips every tensor the IR keeps as metadata. */
static int strip_graph(ctx *c, Onnx__GraphProto *gp, const pn_graph *g)
{
	for (size_t i = 0; i < gp->n_initializer; i++) {
		const pn_value *v = &g->values[g->inits[i]];
		if (v->meta) {
			strip_tensor(gp->initializer[i]);
			if (add_meta(c, v))
				return -1;
		}
	}
	for (size_t i = 0; i < gp->n_node; i++) {
		Onnx__NodeProto *np = gp->node[i];
		const pn_node *n = &g->nodes[i];
		for (size_t a = 0; a < np->n_attribute; a++) {
			Onnx__AttributeProto *ap = np->attribute[a];
			const pn_attr *at = &n->attrs[a];
			if (n->op == PN_OP_Constant && ap->t && n->out[0] >= 0 && g->values[n->out[0]].meta) {
				strip_tensor(ap->t);
				if (add_meta(c, &g->values[n->out[0]]))
					return -1;
			}
			if (ap->g && at->g && strip_graph(c, ap->g, at->g))
				return -1;
			for (size_t k = 0; k < ap->n_graphs && k < (size_t)at->n; k++)
				if (strip_graph(c, ap->graphs[k], at->graphs[k]))
					return -1;
		}
	}
	return 0;
}

/* --- inferred types into value_info ------------------------------------------ */

/* Replaces the graph's value_info with the inferred type of every value a
 * node produces (tensors only), in value order. */
static int write_value_info(ctx *c, Onnx__GraphProto *gp, const pn_graph *g, const pn_infer_result *r)
{
	Onnx__ValueInfoProto **list = pn_arena_alloc(c->a, sizeof(void *) * (size_t)(g->n_values + 1));
	if (!list)
		return -1;
	size_t n = 0;
	for (int v = 0; v < g->n_values; v++) {
		const pn_type *t = &r->v[v].type;
		if (g->values[v].role != PN_ROLE_NODE || t->kind != PN_KIND_TENSOR || !t->dtype)
			continue;
		Onnx__ValueInfoProto *vi = pn_arena_alloc(c->a, sizeof(*vi));
		if (!vi)
			return -1;
		onnx__value_info_proto__init(vi);
		vi->name = (char *)g->values[v].name;
		vi->type = pn_type_to_proto(c->a, t);
		if (!vi->type)
			return -1;
		list[n++] = vi;
	}
	gp->n_value_info = n;
	gp->value_info = list;
	return 0;
}

/* --- test sets ----------------------------------------------------------------- */

static int add_bytes(pn_arena *a, ProtobufCBinaryData **list, size_t *n, void *data, size_t len)
{
	ProtobufCBinaryData *l = pn_arena_alloc(a, sizeof(*l) * (*n + 1));
	if (!l)
		return -1;
	if (*n)
		memcpy(l, *list, sizeof(*l) * *n);
	l[*n].data = pn_arena_memdup(a, data, len);
	l[*n].len = len;
	*list = l;
	(*n)++;
	return l[*n - 1].data ? 0 : -1;
}

/* Reads input_K.pb / output_K.pb of one folder, K = 0, 1, ... until absent. */
static int read_testset(ctx *c, const pn_fileio *io, const char *dir, Passnet__TestSet *ts)
{
	for (int pass = 0; pass < 2; pass++) {
		for (int k = 0; k < 4096; k++) {
			char rel[512];
			void *data = NULL;
			size_t len = 0;
			snprintf(rel, sizeof rel, "%s%s_%d.pb", dir, pass ? "output" : "input", k);
			int rc = io->read(io->ud, rel, &data, &len, c->err);
			if (rc > 0)
				break;
			if (rc < 0)
				return -1;
			rc = pass ? add_bytes(c->a, &ts->outputs, &ts->n_outputs, data, len)
				  : add_bytes(c->a, &ts->inputs, &ts->n_inputs, data, len);
			free(data);
			if (rc)
				return pn_fail(c->err, "out of memory");
		}
	}
	return 0;
}

static int read_testsets(ctx *c, const pn_fileio *io)
{
	char **names = NULL;
	int n = io && io->list ? io->list(io->ud, "", &names, c->err) : 0;
	if (n < 0)
		return -1;
	int rc = 0;
	for (int i = 0; i < n && !rc; i++) {
		size_t l = strlen(names[i]);
		if (strncmp(names[i], "test_data_set_", 14) || names[i][l - 1] != '/')
			continue;
		Passnet__TestSet *ts = pn_arena_alloc(c->a, sizeof(*ts));
		Passnet__TestSet **list = pn_arena_alloc(c->a, sizeof(void *) * (c->rec->n_testsets + 1));
		if (!ts || !list) {
			rc = pn_fail(c->err, "out of memory");
			break;
		}
		passnet__test_set__init(ts);
		if (c->rec->n_testsets)
			memcpy(list, c->rec->testsets, sizeof(void *) * c->rec->n_testsets);
		list[c->rec->n_testsets++] = ts;
		c->rec->testsets = list;
		rc = read_testset(c, io, names[i], ts);
	}
	pn_strv_free(names, n);
	return rc;
}

/* --- the record ------------------------------------------------------------------ */

static void record_header(ctx *c, Onnx__ModelProto *mp, const char *source, const char *path,
			  size_t len)
{
	Passnet__Model *rec = c->rec;
	rec->has_version = 1;
	rec->version = PN_SCHEMA_VERSION;
	rec->source = (char *)source;
	rec->path = (char *)path;
	rec->has_file_bytes = 1;
	rec->file_bytes = len;
	rec->has_ir_version = 1;
	rec->ir_version = mp->ir_version;
	rec->n_opsets = mp->n_opset_import;
	rec->opsets = mp->opset_import;
	rec->producer = mp->producer_name;
	rec->graph = mp;
}

static void record_warnings(ctx *c)
{
	Passnet__Model *rec = c->rec;
	rec->n_warnings = (size_t)c->m->n_warnings;
	rec->warnings = (char **)c->m->warnings;
	rec->has_status = 1;
	rec->status = c->m->n_warnings ? PASSNET__MODEL_STATUS__MODEL_WARNING
				       : PASSNET__MODEL_STATUS__MODEL_OK;
}

static int count_nodes(const pn_graph *g)
{
	int n = g->n_nodes;
	for (int i = 0; i < g->n_nodes; i++)
		for (int a = 0; a < g->nodes[i].n_attr; a++) {
			const pn_attr *at = &g->nodes[i].attrs[a];
			if (at->g)
				n += count_nodes(at->g);
			for (int k = 0; at->type == PN_ATTR_GRAPHS && k < at->n; k++)
				n += count_nodes(at->graphs[k]);
		}
	return n;
}

/* The binding is recorded with the model, so later stages infer alike. */
static int record_bind(ctx *c, const pn_dimbind *bind)
{
	if (!bind || !bind->n)
		return 0;
	c->rec->bound_dims = pn_arena_alloc(c->a, sizeof(char *) * (size_t)bind->n);
	if (!c->rec->bound_dims)
		return -1;
	for (int i = 0; i < bind->n; i++)
		c->rec->bound_dims[i] = pn_arena_printf(c->a, "%s=%lld", bind->names[i],
							(long long)bind->values[i]);
	c->rec->n_bound_dims = (size_t)bind->n;
	return 0;
}

/* test_data_set_0's inputs, for the binding to read (folder order), when it
 * holds every input of the model: a set with fewer (a folder not filled
 * yet) would bind the model as no input it takes, so the model binds as it
 * would alone (as runtime/feed.c feeds it). */
static pn_bind_testset first_testset(ctx *c)
{
	pn_bind_testset ts = {0};
	const Passnet__TestSet *t = c->rec->n_testsets ? c->rec->testsets[0] : NULL;
	if (!t || !t->n_inputs || t->n_inputs != (size_t)c->m->graph->n_inputs)
		return ts;
	const void **bytes = pn_arena_alloc(c->a, sizeof(void *) * (t->n_inputs + 1));
	size_t *len = pn_arena_alloc(c->a, sizeof(size_t) * (t->n_inputs + 1));
	if (!bytes || !len)
		return ts;
	for (size_t i = 0; i < t->n_inputs; i++) {
		bytes[i] = t->inputs[i].data;
		len[i] = t->inputs[i].len;
	}
	ts.n = (int)t->n_inputs;
	ts.bytes = bytes;
	ts.len = len;
	return ts;
}

/* How the binding was chosen, the tries it rejected and the inputs' roles. */
static void record_choice(ctx *c, const pn_binding *b)
{
	c->rec->binding_how = (char *)b->how;
	c->rec->n_binding_tries = (size_t)b->n_tries;
	c->rec->binding_tries = (char **)b->tries;
	c->rec->n_input_roles = (size_t)b->n_roles;
	c->rec->input_roles = (char **)b->roles;
	if (b->warning)
		pn_model_warn(c->m, "%s", b->warning);
}

/* m's check, a blind one in canonical terms and through the run's memo of
 * them (check_form.h): 1 when remembered, 0 when run here (and remembered
 * when it may be), -1 when out of memory.  r: m's inference at bind; peak:
 * the bytes its run holds (pn_infer_peak_bytes of r).  The
 * terms do not depend on whether there is a memo: a check's result is the
 * same whichever way it was reached. */
static int check_by_form(ctx *c, pn_model *m, const Onnx__ModelProto *mp,
			 const pn_dimbind *bind, const pn_infer_result *r, size_t peak,
			 const Passnet__TestSet *ts, pn_weight_check *wc, int *by_form)
{
	pn_check_form f;
	int canon = *by_form = !ts ? pn_check_form_make(m, r, bind, &f) : 0;
	if (canon < 0)
		return -1;
	int found = canon && c->memo ? pn_weight_memo_get_form(c->memo, &f, m, c->a, wc) : 0;
	if (!found && canon && pn_check_form_begin(&f, m))
		found = -1;
	if (!found) {
		/* with f begun, the result is the structure's (check_form.h).  A
		 * check of real weights holds them three more times than one run
		 * at the binding: the file's bytes, the unpacked ModelProto and the
		 * decoded tensors beside the regenerated ones (a ResNet-50 of 102
		 * MB of weights: 446 MB of RSS, against 313 MB for the same
		 * extract without the check); the gate counts them.  A blind
		 * check (some weight's bytes absent) runs on regenerated weights
		 * only, as one run does (AlexNet's: 273 MB of RSS for 233 MB of
		 * weights), and counting its weights again kept such checks from
		 * running side by side for nothing (docs/benchmarks.md, Peer). */
		size_t w = pn_weights_absent(m->graph) ? 0 : pn_infer_weight_bytes(m->graph);
		PN_ASSERT(w <= peak);   /* peak counts them, and passed pn_run_too_big */
		size_t counted = pn_run_gate_enter(peak + 3 * w);
		pn_value_book *book = canon && c->memo ? pn_weight_memo_book(c->memo) : NULL;
		found = pn_weight_scale_check(m, mp, bind, ts, book, c->a, wc, c->err) ? -1 : 0;
		pn_run_gate_leave(counted);
		if (canon)
			pn_check_form_end(&f, m);
		if (!found && canon && c->memo && pn_weight_memo_put_form(c->memo, &f, m, wc))
			found = -1;
	}
	if (canon)
		pn_check_form_free(&f);
	return found;
}

/* The check of m as weight_scale.h makes it, or as the run's memo
 * remembers it: for the same file less who made it (weight_memo.h), for a
 * blind check the same file in all its check reads (check_form.h's file
 * key: no labelling), else the same structure (check_form.h). */
static int run_check(ctx *c, pn_model *m, const Onnx__ModelProto *mp, const void *bytes,
		     size_t len, const pn_dimbind *bind, const pn_infer_result *r, size_t peak,
		     pn_weight_check *wc)
{
	const Passnet__TestSet *ts = c->rec->n_testsets ? c->rec->testsets[0] : NULL;
	pn_key key, fkey;
	int memo = c->memo && pn_weight_memo_key(c->m, bytes, len, bind, ts != NULL, &key);
	int by_file = memo ? pn_weight_memo_get(c->memo, &key, m, c->a, wc) : 0;
	int file_key = !by_file && c->memo && !ts ? pn_check_form_file_key(m, r, bind, &fkey) : 0;
	int found = file_key > 0 ? pn_weight_memo_get(c->memo, &fkey, m, c->a, wc) : by_file;
	int by_form = 0;
	if (file_key < 0)
		found = -1;
	else if (!found && (found = check_by_form(c, m, mp, bind, r, peak, ts, wc, &by_form)) >= 0 &&
		 by_form > 0 && file_key > 0 && pn_weight_memo_put(c->memo, &fkey, m, wc))
		found = -1;
	if (!by_file && found >= 0 && memo && pn_weight_memo_put(c->memo, &key, m, wc))
		found = -1;
	c->out->check_reused = found > 0;
	c->out->check_booked = !found && wc->booked;
	return found < 0 ? pn_fail(c->err, "out of memory") : 0;
}

/* --- the model a check runs ---------------------------------------------------------- */

/* The one-sample form of m (generalize.h) that its blind check runs
 * instead of m, and its inference; NULL when m has none.  A model fixed at
 * a batch B > 1 that is its one-sample form generalized to B computes each
 * sample alike and apart, so one sample's run checks its drawn weights as
 * B samples' would, for 1/B of the work, and the form is the structure of
 * the batch-1 model it was made from, whose check the memo may hold.  Only
 * blind checks with nothing bound or fed: a check of real weights runs the
 * file's bytes, and a test set feeds B samples. */
static pn_model *one_sample(ctx *c, const Onnx__ModelProto *mp, const pn_dimbind *bind,
			    pn_infer_result *r, int64_t *batch)
{
	if (c->rec->n_testsets || (bind && bind->n) || pn_fixed_batch(c->m->graph) < 2 ||
	    !pn_weights_absent(c->m->graph))
		return NULL;
	pn_model *one = pn_model_new();
	char why[PN_ERRLEN];
	pn_decode_opts o = {.weights_as_meta = 1};
	if (one && !pn_model_from_proto(mp, &o, one, why) && !pn_generalize_one(one, batch, why) &&
	    !pn_infer_graph(one->graph, NULL, NULL, r, why))
		return one;
	pn_model_free(one);
	return NULL;
}

/* What the check of `one` set goes to m: its weights' correction scales
 * (both decode mp, so their weights come in one order), and the names of
 * the ranges it recorded (m's own, for once `one` is freed). */
static int carry_check(pn_model *m, const pn_model *one, pn_weight_check *wc)
{
	pn_wmeta **to = NULL, **from = NULL;
	int n = pn_weight_metas(m->graph, &to), k = pn_weight_metas(one->graph, &from);
	int rc = n < 0 || k < 0 ? -1 : 0;
	PN_ASSERT(rc || n == k);
	for (int i = 0; !rc && i < n; i++)
		to[i]->scale = from[i]->scale;
	for (size_t i = 0; !rc && i < wc->n_regen; i++) {
		int v = pn_graph_find_value(m->graph, wc->regen[i]->name);
		PN_ASSERT(v >= 0);
		wc->regen[i]->name = (char *)m->graph->values[v].name;
	}
	free(to);
	free(from);
	return rc;
}

/* The regenerated weights checked against the real ones, their correction
 * scales set on m's statistics before strip_graph copies them, and what the
 * check saw on the record.  A model whose binding did not pass does not
 * run: it says so.  A blind check may run m's one-sample form instead. */
static int check_weights(ctx *c, const Onnx__ModelProto *mp, const void *bytes, size_t len,
			 const pn_dimbind *bind, const pn_infer_result *r, int bound)
{
	pn_weight_check wc;
	char big[PN_ERRLEN] = "";
	int check = bound && !c->no_weight_check, rc = 0;
	pn_infer_result r1;
	int64_t batch = 0;
	pn_model *one = check ? one_sample(c, mp, bind, &r1, &batch) : NULL;
	pn_model *m = one ? one : c->m;
	const pn_infer_result *mr = one ? &r1 : r;
	/* the check's runs hold about what one run at the binding holds */
	size_t peak = check ? pn_infer_peak_bytes(m->graph, mr) : 0;
	if (!check || pn_run_too_big(peak, big)) {
		memset(&wc, 0, sizeof wc);
		wc.n_absent = pn_weights_absent(c->m->graph);
		wc.how = !bound		     ? "not run: the binding did not pass"
			 : c->no_weight_check ? "not run: --no-weight-check"
					      : pn_arena_strdup(c->a, big);
	} else {
		rc = run_check(c, m, mp, bytes, len, bind, mr, peak, &wc) ||
		     (one && carry_check(c->m, one, &wc));
	}
	if (!rc && one && strncmp(wc.how, "not run", 7) &&
	    !(wc.how = pn_arena_printf(c->a, "%s (one sample of a batch of %lld)", wc.how,
				       (long long)batch)))
		rc = -1;
	if (one) {
		pn_infer_result_free(&r1);
		pn_model_free(one);
	}
	if (rc)
		return -1;
	c->rec->has_weights_absent = wc.n_absent > 0;
	c->rec->weights_absent = wc.n_absent;
	c->rec->n_real_ranges = wc.n_real;
	c->rec->real_ranges = wc.real;
	c->rec->n_regen_ranges = wc.n_regen;
	c->rec->regen_ranges = wc.regen;
	c->rec->weight_check = (char *)wc.how;
	return 0;
}

/* --- shape variants ------------------------------------------------------------------ */

pn_key pn_variant_key(const pn_key *base, const char *text)
{
	size_t l = strlen(text);
	uint8_t *buf = malloc(8 + 16 + l);
	if (!buf)
		abort();
	memcpy(buf, "variant", 8);
	memcpy(buf + 8, base->b, 16);
	memcpy(buf + 24, text, l);
	pn_key k = pn_key_of(buf, 24 + l);
	free(buf);
	return k;
}

static pn_model *copy_model(void *ud, char *err)
{
	ctx *c = ud;
	pn_model *m = pn_model_new();
	if (!m) {
		pn_fail(err, "out of memory");
		return NULL;
	}
	/* the proto is stripped by now: its weights come from the statistics, as
	 * they do when a stage loads the stored record */
	pn_decode_opts o = {.weights_as_meta = 1, .metas = c->rec->weights, .n_metas = c->rec->n_weights};
	if (pn_model_from_proto(c->proto, &o, m, err)) {
		pn_model_free(m);
		return NULL;
	}
	return m;
}

/* The record of variant k: only what differs from the base (see
 * schemas/passnet.proto), packed into out. */
static int pack_variant(ctx *c, const pn_variant *v, uint32_t k, pn_ingest_variant *out)
{
	Passnet__Model r;
	passnet__model__init(&r);
	r.has_version = 1;
	r.version = PN_SCHEMA_VERSION;
	r.source = c->rec->source;
	r.path = c->rec->path;
	r.has_status = 1;
	r.status = c->rec->status;
	r.has_variant_of = 1;
	r.variant_of.data = c->out->key.b;
	r.variant_of.len = 16;
	r.has_variant = 1;
	r.variant = k;
	r.n_variant_dims = (size_t)v->n_changed;
	r.variant_dims = (char **)v->changed;
	r.has_variant_batch = v->batch > 0;
	r.variant_batch = v->batch > 0 ? (uint64_t)v->batch : 0;
	r.variant_how = (char *)v->how;
	r.has_variant_ran = 1;
	r.variant_ran = v->ran;
	out->key = pn_variant_key(&c->out->key, v->text);
	out->record_len = passnet__model__get_packed_size(&r);
	out->record = malloc(out->record_len + 1);
	if (!out->record)
		return -1;
	passnet__model__pack(&r, out->record);
	return 0;
}

/* The variants of m as pn_variants_choose makes them, or as the run's memo
 * remembers them for the same file key (variant_memo.h: a model with
 * nothing to bind; r its inference, NULL when it stopped). */
static int choose_variants(ctx *c, const pn_binding *chosen, const pn_infer_result *r,
			   pn_variants *vs)
{
	pn_key key;
	char tag[64];
	snprintf(tag, sizeof tag, "passnet generalized variants 1, at most %d", c->max_variants);
	int keyed = !chosen->how && r && c->variant_memo && c->max_variants > 0 ?
			    pn_form_file_key(c->m, r, NULL, tag, &key) : 0;
	int found = keyed > 0 ? pn_variant_memo_get(c->variant_memo, &key, c->a, vs) : keyed;
	c->out->variants_reused = found > 0;
	pn_variant_src src = {.copy = copy_model, .copy_ud = c, .r = r, .memo = c->variant_memo};
	if (!found && (pn_variants_choose(c->m, chosen, c->max_variants, &src, c->a, vs, c->err) ||
		       (keyed > 0 && pn_variant_memo_put(c->variant_memo, &key, vs))))
		found = -1;
	c->out->independence_reused = src.independence_reused;
	return found < 0 ? -1 : 0;
}

static int make_variants(ctx *c, const pn_binding *chosen, const pn_infer_result *r)
{
	pn_variants vs;
	if (choose_variants(c, chosen, r, &vs))
		return pn_fail(c->err, "out of memory");
	c->rec->n_variant_notes = (size_t)vs.n_notes;
	c->rec->variant_notes = (char **)vs.notes;
	if (!vs.n)
		return 0;
	c->out->variants = calloc((size_t)vs.n, sizeof(pn_ingest_variant));
	if (!c->out->variants)
		return pn_fail(c->err, "out of memory");
	for (int k = 0; k < vs.n; k++) {
		if (pack_variant(c, &vs.v[k], (uint32_t)(k + 1), &c->out->variants[k]))
			return pn_fail(c->err, "out of memory");
		c->out->n_variants++;
	}
	return 0;
}

static int ingest(ctx *c, const void *bytes, size_t len, const pn_fileio *io, const char *source,
		  const char *path, const pn_dimbind *given)
{
	Onnx__ModelProto *mp = pn_model_unpack(bytes, len, c->m, c->err);
	c->proto = mp;
	if (!mp || pn_onnx_resolve_external(mp, io, c->m, c->err) < 0)
		return -1;
	pn_decode_opts o = {.weights_as_meta = 1};
	if (pn_model_from_proto(mp, &o, c->m, c->err))
		return -1;
	if (io && read_testsets(c, io))
		return -1;
	pn_binding chosen;
	pn_bind_testset ts = first_testset(c);
	if (pn_binding_choose(c->m, given, &ts, c->a, &chosen, c->err))
		return -1;
	/* a model with nothing to bind keeps the --dim list as it was given */
	const pn_dimbind *bind = chosen.how ? &chosen.bind : given;
	record_choice(c, &chosen);
	pn_infer_result r;
	char ierr[PN_ERRLEN];
	int inferred = !pn_infer_graph(c->m->graph, bind, NULL, &r, ierr);
	if (!inferred)
		pn_model_warn(c->m, "shape inference stopped: %s", ierr);
	record_header(c, mp, source, path, len);
	int rc = record_bind(c, bind) || check_weights(c, mp, bytes, len, bind, &r, !chosen.warning && inferred) ||
		 strip_graph(c, mp->graph, c->m->graph);
	if (!rc && inferred)
		rc = write_value_info(c, mp->graph, c->m->graph, &r);
	if (!rc) {
		record_warnings(c);
		/* a model whose binding fails gets no variants: they would fail alike */
		if (!chosen.warning && make_variants(c, &chosen, inferred ? &r : NULL))
			rc = -1;
		c->rec->has_nodes = c->rec->has_values = c->rec->has_unknown_dims = 1;
		c->rec->nodes = (uint32_t)count_nodes(c->m->graph);
		c->rec->values = (uint32_t)c->m->graph->n_values;
		c->rec->unknown_dims = inferred ? (uint32_t)r.unknown : (uint32_t)c->m->graph->n_values;
	}
	if (inferred)
		pn_infer_result_free(&r);
	if (rc && !*c->err)
		pn_fail(c->err, "out of memory");
	return rc;
}

void pn_ingest_model(const void *bytes, size_t len, const pn_fileio *io, const char *source,
		     const char *path, const pn_ingest_opts *o, pn_ingest *out)
{
	memset(out, 0, sizeof(*out));
	out->key = pn_key_of(bytes, len);
	pn_model *m = pn_model_new();
	Passnet__Model rec;
	passnet__model__init(&rec);
	ctx c = {.m = m, .rec = &rec, .err = out->err, .max_variants = o->variants,
		 .no_weight_check = o->no_weight_check, .memo = o->memo,
		 .variant_memo = o->variant_memo, .out = out};
	if (!m) {
		out->status = PASSNET__MODEL_STATUS__MODEL_FAILED;
		pn_fail(out->err, "out of memory");
		return;
	}
	c.a = &m->arena;
	if (ingest(&c, bytes, len, io, source, path, o->bind)) {
		out->status = PASSNET__MODEL_STATUS__MODEL_FAILED;
	} else {
		out->status = (int)rec.status;
		out->record_len = passnet__model__get_packed_size(&rec);
		out->record = malloc(out->record_len ? out->record_len : 1);
		if (out->record) {
			passnet__model__pack(&rec, out->record);
		} else {
			out->status = PASSNET__MODEL_STATUS__MODEL_FAILED;
			pn_fail(out->err, "out of memory packing the record");
		}
	}
	pn_model_free(m);
}

void pn_ingest_clear(pn_ingest *in)
{
	free(in->record);
	in->record = NULL;
	for (int k = 0; k < in->n_variants; k++)
		free(in->variants[k].record);
	free(in->variants);
	in->variants = NULL;
	in->n_variants = 0;
}

/* --- loading ------------------------------------------------------------------------ */

/* "name=value" into the binding: a name already bound takes the new value
 * (a variant's dims override its base's), a new one is added. */
static void bind_set(pn_model *m, const char *entry)
{
	const char *eq = strchr(entry, '=');
	const char *name = eq ? pn_arena_strndup(&m->arena, entry, (size_t)(eq - entry)) : "";
	int64_t value = eq ? atoll(eq + 1) : 1;
	for (int i = 0; i < m->bind.n; i++)
		if (!strcmp(m->bind.names[i], name)) {
			m->bind.values[i] = value;
			return;
		}
	m->bind.names[m->bind.n] = name;
	m->bind.values[m->bind.n++] = value;
}

static int load_bind(pn_model *m, const Passnet__Model *rec)
{
	size_t cap = rec->n_bound_dims + rec->n_variant_dims + 1;
	m->bind.n = 0;
	m->bind.names = pn_arena_alloc(&m->arena, sizeof(char *) * cap);
	m->bind.values = pn_arena_alloc(&m->arena, sizeof(int64_t) * cap);
	if (!m->bind.names || !m->bind.values)
		return -1;
	for (size_t i = 0; i < rec->n_bound_dims; i++)
		bind_set(m, rec->bound_dims[i]);
	for (size_t i = 0; i < rec->n_variant_dims; i++)
		bind_set(m, rec->variant_dims[i]);
	return 0;
}

int pn_model_from_record(const void *rec_bytes, size_t len, pn_model **out, Passnet__Model **recp,
			 char *err)
{
	pn_model *m = pn_model_new();
	if (!m)
		return pn_fail(err, "out of memory");
	ProtobufCAllocator al;
	pn_arena_protobuf_allocator(&m->arena, &al);
	Passnet__Model *rec = passnet__model__unpack(&al, len, rec_bytes);
	int rc = 0;
	if (!rec || !rec->graph)
		rc = pn_fail(err, "model record is corrupt or holds no graph");
	if (!rc) {
		pn_decode_opts o = {.weights_as_meta = 1, .metas = rec->weights, .n_metas = rec->n_weights};
		rc = pn_model_from_proto(rec->graph, &o, m, err);
	}
	if (rc) {
		pn_model_free(m);
		return -1;
	}
	if (load_bind(m, rec)) {
		pn_model_free(m);
		return pn_fail(err, "out of memory");
	}
	/* a generalized batch (extract/variants.h) is rewritten on every load:
	 * the record keeps the base graph once */
	if (rec->has_variant_batch && pn_generalize_batch(m, (int64_t)rec->variant_batch, err)) {
		pn_model_free(m);
		return -1;
	}
	if (recp)
		*recp = rec;
	*out = m;
	return 0;
}

int pn_model_from_record_typed(const void *rec_bytes, size_t len, pn_model **out,
			       Passnet__Model **rec, pn_infer_result *r, char *err)
{
	if (pn_model_from_record(rec_bytes, len, out, rec, err))
		return -1;
	if (pn_infer_graph((*out)->graph, &(*out)->bind, NULL, r, err)) {
		pn_model_free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}
