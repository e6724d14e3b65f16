/*
 * tolerance.c - the tolerance ladder of the ES_t score.
 *
 * Level t gives atol = 10^t and an rtol whose exponent is scaled by how many
 * significant digits the dtype carries: 5.886/5 for float32 (24-bit
 * mantissa), 3/5 for float16 (11 bits), 1.796/5 for bfloat16 (8 bits); for
 * float64 both are 10^(7t/5).  Every other dtype (integers, bool, complex)
 * is judged on the float32 ladder: the ladder is about how far a number may
 * drift, and float32 is the dtype the tasks are mostly computed in.
 */
#include <math.h>

#include "judge/score.h"
#include "schemas/tensor.h"

void pn_tolerance(int dtype, int level, double *rtol, double *atol)
{
	double t = level;
	switch (dtype) {
	case PN_FLOAT16:
		*rtol = pow(10, 3 * t / 5);
		*atol = pow(10, t);
		break;
	case PN_BFLOAT16:
		*rtol = pow(10, 1.796 * t / 5);
		*atol = pow(10, t);
		break;
	case PN_DOUBLE:
		*rtol = *atol = pow(10, 7 * t / 5);
		break;
	default:
		*rtol = pow(10, 5.886 * t / 5);
		*atol = pow(10, t);
		break;
	}
}
