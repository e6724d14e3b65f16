/*
 * formats.c - which reader a model file's bytes go to.  Everything after
 * it sees an ONNX ModelProto: an ONNX file is one, a TorchScript archive
 * is lowered to one (model/torchscript.h).  The choice is by content, not
 * by name, so a .pt renamed .onnx (or the reverse) reads the same.
 */
#include <string.h>

#include "common/err.h"
#include "model/formats.h"
#include "model/onnx.h"
#include "model/torchscript.h"

int pn_model_format(const void *bytes, size_t len)
{
	/* every zip goes to the TorchScript reader, which says what a zip that
	 * is not one (or is cut short) lacks */
	if (pn_torchscript_sniff(bytes, len) || (len >= 4 && !memcmp(bytes, "PK\003\004", 4)))
		return PN_FORMAT_TORCHSCRIPT;
	return PN_FORMAT_ONNX;
}

Onnx__ModelProto *pn_model_unpack(const void *bytes, size_t len, pn_model *m, char *err)
{
	if (pn_model_format(bytes, len) == PN_FORMAT_ONNX)
		return pn_onnx_unpack(bytes, len, &m->arena, err);
	const char *other = pn_torchscript_other(bytes, len);
	if (other) {
		pn_fail(err, "%s", other);
		return NULL;
	}
	if (len > PN_LIMIT_MODEL_BYTES) {
		pn_fail(err, "model file is %zu bytes (limit %zu)", len, PN_LIMIT_MODEL_BYTES);
		return NULL;
	}
	pn_torchscript_info info;
	Onnx__ModelProto *mp = pn_torchscript_to_onnx(bytes, len, &m->arena, &info, err);
	if (!mp) {
		pn_errprefix(err, "TorchScript");
		return NULL;
	}
	for (int i = 0; i < info.n_unsupported; i++)
		pn_model_warn(m, "TorchScript op %s has no ONNX mapping: kept as an unknown op",
			      info.unsupported[i]);
	return mp;
}
