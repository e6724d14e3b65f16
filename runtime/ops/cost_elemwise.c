/*
 * cost_elemwise.c - costs of elementwise, activation, broadcasting,
 * quantization and generator ops.
 *
 * These read each input and write each output once, so the default traffic
 * is right and only the operations per output element differ.  Simple
 * arithmetic, comparisons, casts, Relu, Abs, Sqrt and division are one
 * operation (a single vector instruction each) and keep the default; only
 * ops that do more per element have a function here.
 */
#include <math.h>

#include "runtime/ops/cost_impl.h"

#define T PN_COST_TRANS

#define PER_OUTPUT(op, n)                                                           \
	int pn_cost_##op(pn_costctx *c)                                             \
	{                                                                           \
		return pn_cost_per_output(c, (n));                                  \
	}

/* Transcendentals: one evaluation of the function (PN_COST_TRANS). */
PER_OUTPUT(Acos, T)
PER_OUTPUT(Acosh, T)
PER_OUTPUT(Asin, T)
PER_OUTPUT(Asinh, T)
PER_OUTPUT(Atan, T)
PER_OUTPUT(Atanh, T)
PER_OUTPUT(Cos, T)
PER_OUTPUT(Cosh, T)
PER_OUTPUT(Erf, T)
PER_OUTPUT(Exp, T)
PER_OUTPUT(Log, T)
PER_OUTPUT(Sin, T)
PER_OUTPUT(Sinh, T)
PER_OUTPUT(Tan, T)
PER_OUTPUT(Tanh, T)

/* Activations: the transcendentals they call plus the arithmetic around
 * them, counted from their ONNX definitions:
 *   Sigmoid   1/(1+exp(-x))            exp, add, divide
 *   Softplus  log(1+exp(x))            exp, add, log
 *   Softsign  x/(1+|x|)                abs, add, divide
 *   Elu       x<0 ? a(exp(x)-1) : x    compare, exp, subtract, multiply
 *   Selu      Elu then a scale         one more multiply
 *   Celu      max(0,x)+min(0,a(exp(x/a)-1))  divide, exp, sub, mul, max, min, add
 *   Mish      x*tanh(softplus(x))      softplus, tanh, multiply
 *   HardSigmoid max(0,min(1,ax+b))     multiply-add, two clamps
 *   HardSwish x*HardSigmoid(x)         one more multiply
 *   LeakyRelu, PRelu, Shrink, Clip     a compare (or clamp) and an operation */
PER_OUTPUT(Sigmoid, T + 2)
PER_OUTPUT(Softplus, 2 * T + 1)
PER_OUTPUT(Softsign, 3)
PER_OUTPUT(Elu, T + 3)
PER_OUTPUT(Selu, T + 4)
PER_OUTPUT(Celu, T + 6)
PER_OUTPUT(Mish, 3 * T + 2)
PER_OUTPUT(HardSigmoid, 4)
PER_OUTPUT(HardSwish, 5)
PER_OUTPUT(LeakyRelu, 2)
PER_OUTPUT(PRelu, 2)
PER_OUTPUT(Shrink, 2)
PER_OUTPUT(Clip, 2)

/* Quantization: QuantizeLinear divides by the scale, rounds, adds the zero
 * point and saturates (4); DequantizeLinear subtracts the zero point and
 * scales (2); DynamicQuantizeLinear first finds min and max (2), then
 * quantizes (4). */
PER_OUTPUT(QuantizeLinear, 4)
PER_OUTPUT(DequantizeLinear, 2)

int pn_cost_DynamicQuantizeLinear(pn_costctx *c)
{
	return pn_cost_per_input(c, 6);
}

/* Window functions: a cosine (or two for Blackman) per point. */
PER_OUTPUT(HannWindow, T + 2)
PER_OUTPUT(HammingWindow, T + 2)
PER_OUTPUT(BlackmanWindow, 2 * T + 4)

/* Variadic ops combine k inputs with k-1 operations per element; Mean adds
 * the division. */
static int variadic(pn_costctx *c, int extra)
{
	int k = 0;
	for (int i = 0; i < c->n_in; i++)
		k += c->in && c->in[i] != NULL;
	return pn_cost_per_output(c, (k > 1 ? k - 1 : 1) + extra);
}

int pn_cost_Sum(pn_costctx *c)
{
	return variadic(c, 0);
}

int pn_cost_Max(pn_costctx *c)
{
	return variadic(c, 0);
}

int pn_cost_Min(pn_costctx *c)
{
	return variadic(c, 0);
}

int pn_cost_Mean(pn_costctx *c)
{
	return variadic(c, 1);
}

/* Pow is exp(y*log(x)) in general (two transcendentals and a multiply), but
 * models mostly raise to a known small constant, which a compiler turns into
 * multiplies: x^2 is one, x^3 two, x^0.5 a square root, a negative integer
 * adds a division. */
static double pow_ops(const pn_tensor *e)
{
	double general = 2 * T + 1;
	if (!e || e->numel < 1 || e->dtype == PN_STRING)
		return general;
	double y = pn_tensor_get_f64(e, 0);
	for (int64_t i = 1; i < e->numel; i++)
		if (pn_tensor_get_f64(e, i) != y)
			return general;
	if (y == 0.5 || y == 1 || y == 0)
		return 1;
	double a = fabs(y);
	if (a != floor(a) || a > 16)
		return general;
	double muls = floor(log2(a)) + __builtin_popcountll((unsigned long long)a) - 1;
	return (muls > 1 ? muls : 1) + (y < 0);
}

int pn_cost_Pow(pn_costctx *c)
{
	return pn_cost_per_output(c, pow_ops(pn_cval(c, 1)));
}

/* Generators: RandomNormal uses Box-Muller (a log, a square root, a cosine
 * and a few multiplies per pair of numbers); the *Like variants read only
 * their input's shape. */
static int random_like(pn_costctx *c, double per_elem)
{
	c->bytes_read = 0;
	return pn_cost_per_output(c, per_elem);
}

PER_OUTPUT(RandomNormal, T + 4)

int pn_cost_RandomNormalLike(pn_costctx *c)
{
	return random_like(c, T + 4);
}

int pn_cost_RandomUniformLike(pn_costctx *c)
{
	return random_like(c, 1);
}
