/*
 * torchscript.c - a TorchScript archive's members: data.pkl, constants.pkl,
 * the code files and the tensors' storages, read and lowered to an ONNX
 * graph (model/torchscript.h), which is then decoded and inferred as
 * extract would.
 *
 * The input is not the zip itself: a mutated zip fails its CRC before any
 * of passnet's own code runs.  It is a list of members, each
 * [u16 name length][name][u32 data length][data] (little-endian), which the
 * harness packs into a zip in memory under one top folder, as
 * torch.jit.save does.  tests/fuzz/ts_members.py turns a .pt into one.
 */
#include "fuzz.h"

#include <archive.h>
#include <archive_entry.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "model/onnx.h"
#include "model/torchscript.h"
#include "runtime/infer.h"

#define ZIP_CAP (8u << 20)

static size_t pack_zip(const uint8_t *data, size_t size, uint8_t *zip)
{
	struct archive *w = archive_write_new();
	size_t used = 0;
	if (!w)
		return 0;
	archive_write_set_format_zip(w);
	archive_write_zip_set_compression_store(w);
	if (archive_write_open_memory(w, zip, ZIP_CAP, &used) != ARCHIVE_OK) {
		archive_write_free(w);
		return 0;
	}
	size_t p = 0;
	while (p + 2 <= size) {
		size_t nl = (size_t)data[p] | (size_t)data[p + 1] << 8;
		p += 2;
		if (nl == 0 || nl > 200 || p + nl + 4 > size)
			break;
		char name[220] = "m/";
		memcpy(name + 2, data + p, nl);
		name[2 + nl] = 0;
		p += nl;
		size_t dl = (size_t)data[p] | (size_t)data[p + 1] << 8 | (size_t)data[p + 2] << 16 |
			    (size_t)data[p + 3] << 24;
		p += 4;
		if (dl > size - p)
			dl = size - p;
		if (memchr(name, 0, 2 + nl))   /* a NUL inside the name */
			break;
		struct archive_entry *e = archive_entry_new();
		archive_entry_set_pathname(e, name);
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_perm(e, 0644);
		archive_entry_set_size(e, (la_int64_t)dl);
		int ok = archive_write_header(w, e) == ARCHIVE_OK &&
			 archive_write_data(w, data + p, dl) == (la_ssize_t)dl;
		archive_entry_free(e);
		p += dl;
		if (!ok)
			break;
	}
	archive_write_close(w);
	archive_write_free(w);
	return used;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t *zip;
	if (!zip && !(zip = malloc(ZIP_CAP)))
		return 0;
	size_t len = pack_zip(data, size, zip);
	if (!len)
		return 0;
	char err[PN_ERRLEN];
	pn_model *m = pn_model_new();
	if (!m)
		return 0;
	m->arena.limit = (size_t)256 << 20;
	Onnx__ModelProto *mp = pn_torchscript_to_onnx(zip, len, &m->arena, NULL, err);
	pn_decode_opts o = {.weights_as_meta = 1};
	pn_infer_result r;
	if (mp && !pn_model_from_proto(mp, &o, m, err) && !pn_infer_graph(m->graph, NULL, NULL, &r, err))
		pn_infer_result_free(&r);
	pn_model_free(m);
	return 0;
}
