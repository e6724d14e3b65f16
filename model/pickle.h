/*
 * pickle.h - reading Python pickles as torch writes them (data.pkl and
 * constants.pkl of a TorchScript archive, torch.save's files), without
 * Python: a small stack machine over the opcodes of protocols 0-5 that
 * builds a tree of values in an arena.
 *
 * Nothing is called: GLOBAL/STACK_GLOBAL give a PN_PKL_GLOBAL naming the
 * callable, REDUCE/NEWOBJ/NEWOBJ_EX/OBJ/INST give a PN_PKL_OBJECT holding
 * that callable and its arguments, BUILD attaches the state to the object
 * below it (or to a fresh object when the target is not one), and
 * BINPERSID/PERSID give a PN_PKL_PERSID holding the persistent id.  The
 * reader of the tree decides what an object means (a module, a tensor
 * rebuilt from a storage, an OrderedDict).
 *
 * Dict-like objects: torch writes an OrderedDict as REDUCE of the class
 * with no arguments, then SETITEMS on that object.  SETITEM(S) on an
 * OBJECT without a state put the pairs in a fresh DICT that becomes its
 * state (later SETITEMs add to it); APPEND(S) and ADDITEMS likewise make a
 * LIST (a list subclass).  A BUILD that follows (torch.save's state_dict
 * carries its `_metadata` that way) then goes to attrs, so the state stays
 * the items.  BUILD on anything else that cannot take it (not an OBJECT,
 * or one whose state and attrs are taken) makes a fresh OBJECT with fn =
 * that value, empty args and that state.  An OBJECT's args is always a
 * TUPLE.  Sets and frozensets are LISTs; Python 2's str (STRING,
 * BINSTRING) is a STR.  NEWOBJ_EX with keyword arguments, EXT1/2/4 (the
 * extension registry) and out-of-band buffers (protocol 5) are errors.
 *
 * The memo shares nodes: a value pickled twice (a module referenced from
 * two places) is one node, and APPEND/SETITEM grow a container in place
 * wherever it is referenced.  None, True and False are shared nodes too.
 * At STOP the tree is checked: a cycle (a list appended to itself through
 * the memo) is an error, and so are nesting deeper than PN_PKL_LIMIT_DEPTH
 * containers and a tree whose walk would meet more than PN_PKL_LIMIT_TREE
 * values (sharing makes that exponential: a chain of tuples each holding
 * the previous one twice), so readers may recurse without a memo of their
 * own.  Strings are copied as they are (not checked to be UTF-8); a dict
 * key set twice is kept twice, and pn_pkl_dict_get returns the last value.
 *
 * Limits are checked before allocation: the count of items of one
 * container and of the whole stack, memo indices, nested MARKs
 * (PN_PKL_LIMIT_*), and every length against the bytes left.  A hostile
 * pickle gets an error in err (one line, no file name: the caller prefixes
 * it), never a crash; everything lives in the arena, whose limit bounds
 * the memory (a node is about 150 bytes, and an opcode of one byte can
 * make one, so set a limit for untrusted input).
 */
#ifndef PN_PICKLE_H
#define PN_PICKLE_H

#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"

enum pn_pkl_kind {
	PN_PKL_NONE = 0,
	PN_PKL_BOOL,     /* i: 0 or 1 */
	PN_PKL_INT,      /* i (LONG values beyond 64 bits are an error) */
	PN_PKL_FLOAT,    /* f */
	PN_PKL_STR,      /* s, len (UTF-8, NUL-terminated too) */
	PN_PKL_BYTES,    /* s, len (bytes, bytearray) */
	PN_PKL_TUPLE,    /* items[0..n) */
	PN_PKL_LIST,     /* items[0..n) */
	PN_PKL_DICT,     /* items[0..2n): key, value, key, value... in insertion order */
	PN_PKL_GLOBAL,   /* module and name ("torch._utils", "_rebuild_tensor_v2") */
	PN_PKL_OBJECT,   /* fn (a GLOBAL, or any value), args (a TUPLE), state (BUILD's, the DICT
	                    or LIST of SETITEM/APPEND's items, or NULL), attrs (see above) */
	PN_PKL_PERSID,   /* pid: the persistent id (torch: a tuple ('storage', GLOBAL, key, location, numel)) */
};

typedef struct pn_pkl pn_pkl;
struct pn_pkl {
	uint8_t kind;
	int64_t i;
	double f;
	const char *s;
	size_t len;
	const char *module, *name;   /* PN_PKL_GLOBAL */
	pn_pkl **items;
	int32_t n;                   /* items (TUPLE, LIST) or pairs (DICT) */
	pn_pkl *fn, *args, *state;   /* PN_PKL_OBJECT */
	pn_pkl *attrs;               /* PN_PKL_OBJECT: BUILD's, when SETITEM/APPEND took state */
	pn_pkl *pid;                 /* PN_PKL_PERSID */
};

#define PN_PKL_LIMIT_DEPTH 256        /* containers nested in containers */
#define PN_PKL_LIMIT_ITEMS (1 << 24)  /* items of one container, and the stack */
#define PN_PKL_LIMIT_MEMO (1 << 24)   /* memo slots */
#define PN_PKL_LIMIT_TREE (1 << 24)   /* values a walk of the tree meets (shared ones each time) */

/* Reads one pickle (up to STOP) from bytes into *out.  Returns 0, or -1 with
 * a one-line message in err (PN_ERRLEN bytes). */
int pn_pickle_load(const void *bytes, size_t len, pn_arena *a, pn_pkl **out, char *err);

/* Helpers for readers of the tree. */
/* The value of a DICT (or of the DICT state of an OBJECT, such as an
 * OrderedDict's items) under a string key, or NULL. */
const pn_pkl *pn_pkl_dict_get(const pn_pkl *dict, const char *key);
/* 1 when v is a GLOBAL (or an OBJECT whose fn is one) named module.name. */
int pn_pkl_is_global(const pn_pkl *v, const char *module, const char *name);

#endif
