/* The fully connected layer y = W x + b over N rows at once: one product. */
#include <string.h>

#include "layers.h"

void linear_forward(real *out, const real *in, const real *W, const real *bias,
                    int N, int n_in, int n_out, int ldw, int accumulate)
{
    /* out: [N, n_out], in: [N, n_in], W: [n_out, ldw], bias: [n_out] */
    real beta = accumulate ? 1 : 0;
    if (bias) {
        /* The bias goes in first and the product is accumulated onto it, in
         * training and inference alike, so both round the same way. */
        for (int n = 0; n < N; n++) {
            real *o = out + (size_t)n * n_out;
            if (accumulate)
                for (int k = 0; k < n_out; k++)
                    o[k] += bias[k];
            else
                memcpy(o, bias, (size_t)n_out * sizeof *o);
        }
        beta = 1;
    }
    gemm(0, 1, N, n_out, n_in, 1, in, n_in, W, ldw, beta, out, n_out);
}

void linear_backward(real *din, real *dW, real *dbias, const real *dout, const real *in,
                     const real *W, int N, int n_in, int n_out, int ldw)
{
    /* din: [N, n_in], dW: [n_out, ldw], dbias: [n_out], dout: [N, n_out] */
    if (din)
        gemm(0, 0, N, n_in, n_out, 1, dout, n_out, W, ldw, 1, din, n_in);
    if (dW)
        gemm(1, 0, n_out, n_in, N, 1, dout, n_out, in, n_in, 1, dW, ldw);
    if (dbias)
        for (int n = 0; n < N; n++) {
            const real *d = dout + (size_t)n * n_out;
            for (int k = 0; k < n_out; k++)
                dbias[k] += d[k];
        }
}
