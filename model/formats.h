/*
 * formats.h - the model file formats passnet reads, told apart by content.
 */
#ifndef PN_FORMATS_H
#define PN_FORMATS_H

#include <stddef.h>

#include "onnx/onnx.pb-c.h"
#include "schemas/ir.h"

enum pn_model_format {
	PN_FORMAT_ONNX = 0,        /* an ONNX ModelProto */
	PN_FORMAT_TORCHSCRIPT,     /* a torch.jit.save archive */
};

int pn_model_format(const void *bytes, size_t len);
/* The file as an ONNX ModelProto in m's arena (a TorchScript archive is
 * lowered to one; its unmapped ops are warnings of m), or NULL with a
 * one-line message. */
Onnx__ModelProto *pn_model_unpack(const void *bytes, size_t len, pn_model *m, char *err);

#endif
