/*
 * torchscript.h - reading PyTorch's serialized models without Python.
 *
 * A TorchScript archive (torch.jit.save: .pt, .pth, .jit, also inside a
 * TorchServe .mar or any archive) is lowered to an ONNX ModelProto in the
 * caller's arena, so that every stage after the reader sees one format:
 * aten ops map onto the op catalogue as torch.onnx maps them
 * (model/ts_aten.c), and the same op at the same shapes hashes the same
 * from a .pt as from its .onnx export.  See model/ts_internal.h for the
 * parts.
 */
#ifndef PN_TORCHSCRIPT_H
#define PN_TORCHSCRIPT_H

#include <stddef.h>

#include "common/arena.h"
#include "onnx/onnx.pb-c.h"

typedef struct pn_torchscript_info {
	/* aten ops the table does not map: each became a node of domain
	 * "torch" (the model is kept, the partition cuts around them) */
	const char **unsupported;
	int n_unsupported;
} pn_torchscript_info;

/* 1 when bytes are a TorchScript archive (a zip holding data.pkl and code). */
int pn_torchscript_sniff(const void *bytes, size_t len);
/* For a zip that is a PyTorch file of another kind, the reason it is not
 * read ("a torch.save file ...", "a torch.export .pt2 archive ..."), else
 * NULL. */
const char *pn_torchscript_other(const void *bytes, size_t len);
/* The archive as an ONNX model (opset 17, plus domain "torch" for ops the
 * table does not map), or NULL with a one-line message in err.  info (may
 * be NULL) lists the unmapped ops. */
Onnx__ModelProto *pn_torchscript_to_onnx(const void *bytes, size_t len, pn_arena *a,
					 pn_torchscript_info *info, char *err);

#endif
