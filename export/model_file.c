/*
 * model_file.c - a subgraph as an ONNX file users load with their tools.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/util.h"
#include "canon/decode.h"
#include "runtime/session.h"
#include "export/dtype.h"
#include "export/export.h"
#include "schemas/tensor.h"

static int write_file(const char *path, const ProtobufCMessage *msg, char *err)
{
	size_t n = protobuf_c_message_get_packed_size(msg);
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf)
		return pn_fail(err, "out of memory");
	protobuf_c_message_pack(msg, buf);
	int rc = pn_write_file(path, buf, n, err);
	free(buf);
	return rc;
}

int pn_export_subgraph_onnx_as(const uint8_t *canon, size_t len, const pn_subgraph_weights *ws,
			       uint64_t seed, int dtype, const char *path, char *err)
{
	pn_model *m = NULL;
	Onnx__ModelProto *mp = NULL;
	int rc = pn_subgraph_decode(canon, len, 1, ws, &m, &mp, err);
	if (!rc)
		rc = pn_subgraph_fill_weights(mp, m, seed, &m->arena, err);
	/* the float32 weights as the executor draws them, then rounded */
	if (!rc && dtype != PN_FLOAT)
		rc = pn_dtype_variant(m->graph, mp, dtype, &m->arena, err);
	if (!rc && path)
		rc = write_file(path, &mp->base, err);
	pn_model_free(m);
	return rc;
}

int pn_export_subgraph_onnx(const uint8_t *canon, size_t len, const pn_subgraph_weights *ws,
			    uint64_t seed, const char *path, char *err)
{
	return pn_export_subgraph_onnx_as(canon, len, ws, seed, PN_FLOAT, path, err);
}
