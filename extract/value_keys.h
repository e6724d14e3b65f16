/*
 * value_keys.h - the values of a blind check's run by what computes them,
 * so that a model whose outputs another model's run already computed (a
 * checkpoint published without its head, a hub's "first k layers" cut of a
 * backbone) takes its check from that run instead of running.
 *
 * A value's key covers everything that decides its bytes in the check's
 * run (weight_scale.h: seed 1, one thread):
 *   a graph input       the bytes drawn for it (runtime/inputs.c);
 *   a weight drawn      its draw stream, type, whole-tensor draw, channels
 *                       and correction scale (runtime/weights.c);
 *   a constant          its contents (canon/labels.h: pn_tensor_label);
 *   a node's output k   the node's context-free label (op, version,
 *                       attributes, nested graphs), the keys of its inputs
 *                       and of the outer values its nested graphs capture,
 *                       and k.
 * The executor computes a node from its label and its inputs alone (its
 * plans are per node; the one graph-level plan, fuse.h's quantized chains,
 * computes the same float32 operations, and a value a chain swallows is
 * never observed, so never booked).  Two models' values with one key then
 * hold the same bytes, whatever else either model computes: a value's
 * observed range (least and greatest finite value, whether inf or NaN
 * came) is a function of its key, and the book below can answer for it.
 * Nodes whose draws the session seeds by their name (random ops, Dropout
 * in training mode, a node whose nested graphs hold one) are keyed as
 * unknown, and so is all they feed.
 *
 * The draw streams that make a prefix draw as the whole model does are
 * check_form.h's: named by what reads each weight, not by canonical
 * position.  Whether they match decides only whether the book is hit;
 * the keys alone decide what it answers.
 */
#ifndef PN_VALUE_KEYS_H
#define PN_VALUE_KEYS_H

#include "common/buf.h"
#include "common/util.h"
#include "schemas/ir.h"
#include "schemas/tensor.h"

/* What one run showed of one value. */
typedef struct pn_value_seen {
	double lo, hi;          /* least and greatest finite value, when known */
	int known, nonfinite;   /* some finite float value came; inf or NaN came */
	int observed;           /* the run produced it (a float or not) */
} pn_value_seen;

/* keys[v] for every value v of g's main graph run on in[0..n) (g's inputs
 * in order); an all-zero key where unknown.  0, or -1 when out of memory. */
int pn_value_keys(const pn_graph *g, pn_tensor *const *in, int n, pn_key *keys);

/* 1 when k is a key (not all zero). */
int pn_value_key_known(const pn_key *k);

/* The parts of a key, which check_form.h's stream names are made of too. */
/* A constant by its contents: 0, or -1 when out of memory. */
int pn_contents_key(const pn_tensor *t, pn_key *out);
/* Writes node n's context-free label, then its operands (its inputs in
 * slot order, then the outer values its nested graphs capture), each as
 * put says (v < 0: an omitted input; put returns 0 when it does not know
 * v).  1 when put knew every operand, 0 when not, -1 when out of memory. */
typedef int (*pn_operand_writer)(pn_buf *b, int v, void *ud);
int pn_node_operands(const pn_node *n, pn_operand_writer put, void *ud, pn_buf *b);
/* The key of b's bytes followed by tag, b left as it was (output k of a
 * node: tag k). */
pn_key pn_key_tagged(pn_buf *b, int64_t tag);

/* The run's book of observed values; thread-safe (extract's workers share
 * one). */
typedef struct pn_value_book pn_value_book;

pn_value_book *pn_value_book_new(void);
void pn_value_book_free(pn_value_book *b);
/* 1 and *out when k is booked, else 0. */
int pn_value_book_get(pn_value_book *b, const pn_key *k, pn_value_seen *out);
/* Books s under k unless k is booked already (the same bytes were seen);
 * 0, or -1 when out of memory (the book is unchanged). */
int pn_value_book_put(pn_value_book *b, const pn_key *k, const pn_value_seen *s);

#endif
