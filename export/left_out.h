/*
 * left_out.h - DIR/left_out.tsv of an export: the variants it left out, one
 * line each, so that every such warning stays findable after the run
 * (`passnet ls --warnings --export DIR`) although export only reads the
 * store.  A header line, then in writing order (task by task, as the plan
 * goes):
 *
 *   task<TAB>variant<TAB>kind<TAB>reason
 *
 * kind is one of store/warnings.h's export kinds; the reason is the one
 * line task.json's "left_out" note gives too (its task folder is gone when
 * the task was dropped, this file keeps it).
 */
#ifndef PN_LEFT_OUT_H
#define PN_LEFT_OUT_H

#include <stdint.h>
#include <stdio.h>

#include "store/warnings.h"

#define PN_LEFT_OUT_FILE "left_out.tsv"
#define PN_LEFT_OUT_HEADER "task\tvariant\tkind\treason\n"

/* The kind of a left-out variant from its reason (export/write.c's). */
const char *pn_left_out_kind(const char *reason);
/* One line of left_out.tsv (tabs and line breaks in the names and the
 * reason become spaces). */
void pn_left_out_line(FILE *f, const char *task, const char *variant, const char *reason);
/* Calls fn for each line of DIR/left_out.tsv of `kind` (all when NULL);
 * fn returns non-zero to stop.  The number of lines seen, or -1 with err
 * (no such file, a line not of four fields). */
int64_t pn_left_out_foreach(const char *dir, const char *kind, pn_warning_fn fn, void *ud,
			    char *err);
/* The clauses of export's summary line: per kind "; N WHAT: passnet ls
 * --warnings --kind KIND --export DIR", from DIR/left_out.tsv. */
int pn_left_out_summary(FILE *f, const char *dir, char *err);

#endif
