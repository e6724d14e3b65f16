/*
 * ls.c - `passnet ls`: the models in the store, one line (or JSON object)
 * each, in key order.
 */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "passnet.pb-c.h"
#include "store/query.h"

static const char usage[] =
	"usage: passnet ls [--source NAME] [--status ok|warning|failed]\n"
	"\n"
	"Lists stored models: key, status, nodes, ai.onnx opset, source and path\n"
	"(the canonical place when the same bytes were found at several).\n"
	"--status failed lists the places whose model could not be stored, with\n"
	"the reason.  --json prints one object per line.\n";

typedef struct ls_opts {
	const char *source, *status;
	int json;
	int shown;
} ls_opts;

static const char *status_name(int s)
{
	return s == PASSNET__MODEL_STATUS__MODEL_FAILED    ? "failed"
	       : s == PASSNET__MODEL_STATUS__MODEL_WARNING ? "warning"
							   : "ok";
}

static int64_t default_opset(const Passnet__Model *m)
{
	for (size_t i = 0; i < m->n_opsets; i++)
		if (!m->opsets[i]->domain || !*m->opsets[i]->domain ||
		    !strcmp(m->opsets[i]->domain, "ai.onnx"))
			return m->opsets[i]->version;
	return 0;
}

static int list_model(void *ud, pn_bytes key, pn_bytes val)
{
	ls_opts *o = ud;
	Passnet__Model *m = passnet__model__unpack(NULL, val.len, val.data);
	if (!m)
		return 0;
	const char *st = status_name(m->status);
	if ((!o->source || !strcmp(o->source, m->source)) && (!o->status || !strcmp(o->status, st))) {
		char hex[33];
		pn_hex(key.data, 16, hex);
		o->shown++;
		if (o->json) {
			printf("{\"key\":\"%s\",\"status\":\"%s\",\"nodes\":%u,\"opset\":%lld,\"source\":",
			       hex, st, m->nodes, (long long)default_opset(m));
			pn_json_str(stdout, m->source);
			printf(",\"path\":");
			pn_json_str(stdout, m->path);
			printf(",\"bytes\":%llu,\"unknown_dims\":%u}\n", (unsigned long long)m->file_bytes,
			       m->unknown_dims);
		} else {
			printf("%s  %-7s %6u nodes  opset %-2lld  %s: %s\n", hex, st, m->nodes,
			       (long long)default_opset(m), m->source, m->path);
		}
	}
	passnet__model__free_unpacked(m, NULL);
	return 0;
}

static int list_failed(void *ud, pn_bytes key, pn_bytes val)
{
	(void)key;
	ls_opts *o = ud;
	Passnet__Error *e = passnet__error__unpack(NULL, val.len, val.data);
	if (!e)
		return 0;
	if (!strcmp(e->stage, "extract") && (!o->source || !strcmp(o->source, e->source))) {
		o->shown++;
		if (o->json) {
			printf("{\"status\":\"failed\",\"source\":");
			pn_json_str(stdout, e->source);
			printf(",\"path\":");
			pn_json_str(stdout, e->path);
			printf(",\"error\":");
			pn_json_str(stdout, e->message);
			printf("}\n");
		} else {
			printf("failed  %s: %s: %s\n", e->source, e->path, e->message);
		}
	}
	passnet__error__free_unpacked(e, NULL);
	return 0;
}

int cmd_ls(int argc, char **argv, const pn_cli *cli)
{
	if (pn_wants_help(argc, argv, usage))
		return 0;
	ls_opts o = {.json = cli->json};
	const char *v;
	for (int i = 1; i < argc; i++) {
		if ((v = pn_opt_value(argc, argv, &i, "--source")))
			o.source = v;
		else if ((v = pn_opt_value(argc, argv, &i, "--status")))
			o.status = v;
		else {
			fputs(usage, stderr);
			return 2;
		}
	}
	if (o.status && strcmp(o.status, "ok") && strcmp(o.status, "warning") &&
	    strcmp(o.status, "failed"))
		return pn_die("--status must be ok, warning or failed");
	pn_store *st;
	pn_rtxn *t;
	if (pn_open_for_reading(cli->db, &st, &t))
		return 1;
	if (o.status && !strcmp(o.status, "failed"))
		pn_foreach(t, PN_T_ERRORS, NULL, 0, list_failed, &o);
	else
		pn_foreach(t, PN_T_MODELS, NULL, 0, list_model, &o);
	pn_rtxn_end(t);
	pn_store_close(st);
	return 0;
}
