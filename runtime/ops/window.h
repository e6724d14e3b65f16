/*
 * window.h - sliding-window geometry shared by the Conv and pooling families
 * (runtime/ops/conv*.c, pool.c), and the float32 staging buffers their kernels
 * use for float16/bfloat16/int8 tensors.
 *
 * Kernels work on at most three spatial dims: a 1-D or 2-D window is widened
 * to 3-D by leading dims of size 1 (pn_win_to3), so one loop nest serves
 * Conv1d, Conv2d and Conv3d alike.
 */
#ifndef PN_OPS_WINDOW_H
#define PN_OPS_WINDOW_H

#include <stdint.h>

#include "schemas/ir.h"

#define PN_WIN_MAX (PN_MAX_RANK - 2)

typedef struct pn_window {
	int n;                          /* spatial dims */
	int64_t in[PN_WIN_MAX];         /* input size (-1: unknown) */
	int64_t out[PN_WIN_MAX];        /* output size (-1: unknown) */
	int64_t k[PN_WIN_MAX];          /* kernel size */
	int64_t s[PN_WIN_MAX];          /* stride */
	int64_t d[PN_WIN_MAX];          /* dilation */
	int64_t pb[PN_WIN_MAX];         /* padding before */
	int64_t pe[PN_WIN_MAX];         /* padding after */
} pn_window;

enum { PN_WIN_CEIL = 1 };

/* Forward window (Conv, pools): reads strides, dilations, pads and auto_pad
 * from the node, takes kernel sizes k[] (-1 unknown) and input sizes in[]
 * (-1 unknown), and fills the output sizes.  flags: PN_WIN_CEIL for
 * ceil_mode.
 * -1 with a message in err for invalid attributes or a window that does not
 * fit the padded input. */
int pn_win_forward(pn_window *w, const pn_node *node, int n, const int64_t *in, const int64_t *k,
		   int flags, char *err);

/* Transposed window (ConvTranspose): also reads output_padding and
 * output_shape; out[] is the ConvTranspose output size. */
int pn_win_transpose(pn_window *w, const pn_node *node, int n, const int64_t *in,
		     const int64_t *k, char *err);

/* Copy of w widened to three spatial dims; -1 if w has more than three. */
int pn_win_to3(const pn_window *w, pn_window *w3);

/*
 * The flat layout of one input plane, for direct window loops (depthwise
 * and grouped Conv, the pools).  The padded input is cut into stride phases
 * (the sub-grid of one residue per axis), each stored densely with extents
 * n[]; then output (oz, oy, ox) has the flat index q = (oz * n[1] + oy) *
 * n[2] + ox, and window tap t reads element q + off[t] of the packed plane.
 * An output is a sum (or max) over taps with no bounds test, and a run of
 * consecutive q is a run of consecutive floats for every tap whatever the
 * stride and dilation: loops over q vectorise.  The flat indices with
 * ox >= out[2] or oy >= out[1] are computed and discarded; that waste
 * (n[2] - out[2] per row) is the price of the layout.  Only the phases some
 * tap reads are stored, so strides larger than the window cost nothing.
 */
#define PN_FLAT_PHASES 64
/* Flat outputs are computed in blocks of this many (a multiple of any
 * vector width). */
#define PN_FLAT_Q 16

typedef struct pn_flat {
	pn_window w;                    /* the 3-D window laid out */
	int64_t n[3];                   /* extent of a phase per axis */
	int64_t vol;                    /* floats per phase */
	int64_t nres[3];                /* residues used per axis */
	int64_t res[3][PN_FLAT_PHASES]; /* the residues (padded offset mod stride) */
	int64_t lo[3][PN_FLAT_PHASES];  /* per axis and residue: phase indices */
	int64_t hi[3][PN_FLAT_PHASES];  /* [lo, hi) land inside the input */
	int64_t nq;                     /* flat outputs computed, multiple of PN_FLAT_Q */
	int64_t size;                   /* floats of one packed plane, slack included */
} pn_flat;

/* Lays out w3 (3-D, output sizes known); off[] gets one offset per tap in
 * (kz, ky, kx) order.  -1 if more than PN_FLAT_PHASES phases are used, or
 * the extents are beyond what a real window has (hostile attributes): the
 * caller then takes its general path. */
int pn_flat_plan(pn_flat *f, const pn_window *w3, int64_t *off);
/* Packs one input plane x (in[0] * in[1] * in[2] floats) into dst
 * (f->size floats), padding with pad. */
void pn_flat_pack(const pn_flat *f, const float *x, float pad, float *dst);
/* Flat index of output row (oz, oy). */
static inline int64_t pn_flat_row(const pn_flat *f, int64_t oz, int64_t oy)
{
	return (oz * f->n[1] + oy) * f->n[2];
}

/* float32 view of t's contents: t->data itself for float32, else a malloc'd
 * converted copy (free it when it is not t->data).  Handles float16,
 * bfloat16, int8 and uint8 (exactly representable); NULL when out of memory
 * or for other dtypes. */
float *pn_win_load_f32(const pn_tensor *t);
/* Writes t->numel floats into t (float16, bfloat16, int8, uint8 or float32),
 * rounding to nearest even and saturating for the integer dtypes. */
void pn_win_store_f32(pn_tensor *t, const float *src);

#endif
