/*
 * conv.h - what the convolution files share: the geometry of one
 * convolution, the im2col / GEMM building blocks (runtime/ops/conv.c, used by
 * the integer convolutions in runtime/ops/conv_int.c too) and the direct
 * float32 paths (runtime/ops/conv_direct.c).
 */
#ifndef PN_OPS_CONV_H
#define PN_OPS_CONV_H

#include <stdint.h>

#include "runtime/kernel.h"
#include "runtime/ops/window.h"

typedef struct pn_conv_geom {
	int64_t N, C, M, G;       /* batch, input channels, output channels, groups */
	int64_t Cg, Mg;           /* channels per group, in and out */
	pn_window w;              /* spatial window, widened to 3 dims */
	int64_t isp, osp, ksz;    /* input / output spatial size, kernel size */
} pn_conv_geom;

/* Conv geometry of X [N, C, ...] and W [M, C/group, ...]; allocates output 0
 * as out_dtype [N, M, ...]. */
int pn_conv_setup(pn_kctx *k, const pn_tensor *x, const pn_tensor *w, int out_dtype,
		  pn_conv_geom *g);

/* Columns per im2col segment for a matrix of `rows` rows (bounded scratch). */
int64_t pn_conv_cols(int64_t rows, int64_t total);

/* im2col of `channels` channels starting at x, output positions p0..p0+np-1;
 * taps in the padding read `pad`. */
void pn_conv_im2col_f32(const pn_window *w, const float *x, int64_t channels, int64_t p0,
			int64_t np, float pad, float *col);
void pn_conv_im2col_i32(const pn_window *w, const int32_t *x, int64_t channels, int64_t p0,
			int64_t np, int32_t pad, int32_t *col);
void pn_conv_im2col_u8(const pn_window *w, const uint8_t *x, int64_t channels, int64_t p0,
		       int64_t np, uint8_t pad, uint8_t *col);

/* The windows of one image x of an ungrouped convolution, one row per
 * output position: colT[q * ldc + (c, t)] is the input under tap t of
 * output q's window, or 0 in the padding; columns K .. ldc are zeroed
 * (ldc >= C * ksz: rows padded to whole vectors). */
void pn_conv_gather_windows(const pn_conv_geom *g, const float *x, int64_t ldc, float *colT);

/* C = A * B for int32, row-major (exact: integer sums do not depend on order). */
void pn_conv_gemm_i32(int64_t M, int64_t N, int64_t K, const int32_t *A, int64_t lda,
		      const int32_t *B, int64_t ldb, int32_t *C, int64_t ldc);

/* 1 when w is 1x1 with stride 1 and no padding (the input is the matrix). */
int pn_conv_is_pointwise(const pn_window *w);

/* float32 Conv through the direct paths (conv_direct.c): 0 done, -1 error
 * (k->err set), 1 when none applies (im2col + GEMM then). */
int pn_conv_direct_f32(pn_kctx *k, const pn_conv_geom *g, const float *x, const float *w,
		       const float *b, float *y);

/* For tests and benchmarks only: -1 (the default) lets Conv choose per
 * node; 0 forces im2col + GEMM, 1 the direct path wherever its layout
 * applies.  Both must agree with the naive result. */
extern int pn_conv_force_path;

/*
 * The quantized chain DequantizeLinear(x) -> Conv(., DequantizeLinear(w), b)
 * [-> Relu] -> QuantizeLinear on 8-bit integers (conv_q8.c): x uint8, w int8
 * with zero point 0, scales float32, b float32 (the bias as dequantized).
 * k->node is the Conv (its attributes), k->out[0] receives the
 * QuantizeLinear's output.
 */
typedef struct pn_conv_q8 {
	const pn_tensor *x;          /* uint8 [N, C, ...] */
	float x_scale;
	uint8_t x_zp;
	const pn_tensor *w;          /* int8 [M, C/group, k...] */
	const pn_tensor *w_scale;    /* 1 or M values */
	int w_fixed;                 /* w and w_scale are the same in every run of the session */
	const pn_tensor *bias;       /* float32 [M], or NULL */
	int act;                     /* between the Conv and the QuantizeLinear: enum pn_q8_act */
	float act_a, act_b;          /* Clip's bounds; HardSigmoid's alpha and beta */
	float y_scale;
	int y_dtype;                 /* PN_UINT8 or PN_INT8 */
	int32_t y_zp;
} pn_conv_q8;

/* The activations a chain may hold, as the nodes compute them
 * (runtime/ops/activation.c). */
enum pn_q8_act { PN_Q8_NONE, PN_Q8_RELU, PN_Q8_CLIP, PN_Q8_HARDSIGMOID, PN_Q8_HARDSWISH };

/* 1 when the operands are the ones the 8-bit path takes (nothing allocated). */
int pn_conv_q8_fits(const pn_conv_q8 *a);
int pn_conv_q8_run(pn_kctx *k, const pn_conv_q8 *a);

/* Most taps of a depthwise chain: 255 * 128 * 513 < 2^24, so its sums are
 * exact in float32 (conv_q8_dw.c). */
#define PN_Q8_DW_KMAX 513
/* 1 when g is a depthwise convolution (one channel per group, at most
 * PN_Q8_DW_KMAX taps) whose padded input rows for one output row are not
 * much larger than its planes (a dilation of thousands on a small, widely
 * padded input would make them vast): the others take the GEMM path. */
int pn_conv_q8_dw_fits(const pn_conv_geom *g);
/* pn_conv_q8_run's depthwise convolutions (pn_conv_q8_dw_fits); mult[m] =
 * x_scale * w_scale[m]. */
int pn_conv_q8_depthwise(pn_kctx *k, const pn_conv_geom *g, const pn_conv_q8 *a,
			 const float *mult);

#endif
