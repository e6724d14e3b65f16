/*
 * jsonread.h - a small JSON reader for the files `passnet check` and
 * `passnet score` read (task.json, results JSON Lines).
 *
 * The whole text is parsed into a tree of heap nodes.  Numbers keep their
 * literal text beside the double, because an export seed is a 64-bit
 * integer that a double cannot hold exactly.
 */
#ifndef PN_JSONREAD_H
#define PN_JSONREAD_H

#include <stddef.h>
#include <stdint.h>

enum pn_jtype { PN_JNULL, PN_JBOOL, PN_JNUM, PN_JSTR, PN_JARR, PN_JOBJ };

typedef struct pn_jv {
	int type;               /* enum pn_jtype */
	double num;             /* PN_JNUM; PN_JBOOL: 0 or 1 */
	char *str;              /* PN_JSTR: the string; PN_JNUM: the literal */
	int n;                  /* items of an array or members of an object */
	char **keys;            /* PN_JOBJ: member names */
	struct pn_jv **items;
} pn_jv;

/* Parses text[0..len) (one value, whitespace around it allowed); NULL with
 * a message naming the offset on error.  Nesting is limited to 64. */
pn_jv *pn_jparse(const char *text, size_t len, char *err);
void   pn_jfree(pn_jv *v);

/* Member of an object (the first one with that name), or NULL. */
const pn_jv *pn_jget(const pn_jv *obj, const char *key);
/* The member's string, or NULL when absent or not a string. */
const char *pn_jstr(const pn_jv *obj, const char *key);
/* The member as an unsigned 64-bit integer (from its literal); -1 when
 * absent or not a non-negative integer. */
int pn_ju64(const pn_jv *obj, const char *key, uint64_t *out);

#endif
