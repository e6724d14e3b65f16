/*
 * opschema.h - what the ONNX schemas say about each op of ops.def: the opset
 * versions at which it changed, and its attributes' defaults in each
 * version (schemas/op_schemas.def, generated).  dedup uses both so that a
 * node hashes by the op version it really runs and with every default
 * written out.
 */
#ifndef PN_OPSCHEMA_H
#define PN_OPSCHEMA_H

#include <stdint.h>

enum pn_attr_default_kind {
	PN_AD_FLOAT,
	PN_AD_INT,
	PN_AD_STRING,
	PN_AD_INTS,
	PN_AD_FLOATS,
	PN_AD_STRINGS,
};

typedef struct pn_attr_default {
	int op;
	int since;
	const char *name;
	int kind;
	double f;
	int64_t i;
	const char *s;      /* strings, and lists as space-separated text */
} pn_attr_default;

/* The version of op in effect under the model's opset (the latest version
 * <= opset), or opset itself if the schemas know nothing of the op. */
int pn_op_effective_version(int op, int opset);
/* Defaults of op's attributes in the version `since`; returns the count. */
int pn_op_defaults(int op, int since, const pn_attr_default **first);

#endif
