// The fused optimizer updates (MXNet 1.x src/operator/optimizer_op-inl.h, contrib/adamw-inl.h),
// one element at a time, shared by the CPU loops of optim.pyx and the CUDA kernels of
// mxlite/cuda/ops/optimizer.py. mxlite/ops/optimizer_ops.py documents the operators and the
// few places where they differ from MXNet. Parameters are cast to the array's dtype T first,
// as MXNet's kernels did; gradient clipping applies when clip_gradient > 0 (a NaN gradient
// stays NaN: it compares false both ways).
#pragma once
#include "mx_math.h"

// Algorithm ids (optim.pyx ALGOS)
enum {
    MX_OPTIM_SGD, MX_OPTIM_SGD_MOM, MX_OPTIM_NAG_MOM, MX_OPTIM_ADAM, MX_OPTIM_ADAMW,
    MX_OPTIM_RMSPROP, MX_OPTIM_RMSPROPALEX, MX_OPTIM_SIGNSGD, MX_OPTIM_FTRL, MX_OPTIM_SIGNUM,
    MX_OPTIM_FTML, MX_OPTIM_LAMB1, MX_OPTIM_N_ALGOS
};

// The scalar parameters as given (a missing one is 0), in the order of optim.pyx PARAMS: the
// GPU passes this record by value from a NumPy record of the same fields.
struct mx_optim_params {
    double lr, wd, rescale, clip, momentum, beta1, beta2, eps, eta;
    double gamma1, gamma2, clip_weights, lamda1, beta, wd_lh;
    // bias corrections of step t, computed by the caller in double: 1 - beta1**t and
    // 1 - beta2**t (FTML; LAMB phase 1 with bias_correction, else 1)
    double bias1, bias2;
};

// The parameters in the array's dtype, and the flags derived from them.
template <typename T> struct mx_optim_consts {
    T lr, wd, rescale, clip, mom, b1, b2, eps, eta, g1, g2, cw, l1, beta, wd_lh, one, decay;
    T bc1, bc2;
    bool clipping, clip_w;
};

template <typename T> MX_FN mx_optim_consts<T> mx_optim_prepare(const mx_optim_params& p) {
    mx_optim_consts<T> c;
    c.lr = (T)p.lr; c.wd = (T)p.wd; c.rescale = (T)p.rescale; c.clip = (T)p.clip;
    c.mom = (T)p.momentum; c.b1 = (T)p.beta1; c.b2 = (T)p.beta2; c.eps = (T)p.eps;
    c.eta = (T)p.eta; c.g1 = (T)p.gamma1; c.g2 = (T)p.gamma2; c.cw = (T)p.clip_weights;
    c.l1 = (T)p.lamda1; c.beta = (T)p.beta; c.wd_lh = (T)p.wd_lh;
    c.bc1 = (T)p.bias1; c.bc2 = (T)p.bias2;
    c.clipping = p.clip > 0;
    c.clip_w = p.clip_weights > 0;
    c.one = 1;
    c.decay = c.one - c.lr * c.wd;
    return c;
}

// x clipped to [-bound, bound]; NaN passes through, as MXNet's clip
template <typename T> MX_FN T mx_optim_clip(T x, T bound) {
    return x > bound ? bound : (x < -bound ? -bound : x);
}

template <typename T> MX_FN T mx_optim_sign(T x) { return (T)((x > 0) - (x < 0)); }

// the rescaled gradient gr, clipped when clip_gradient > 0
template <typename T> MX_FN T mx_optim_clipped(const mx_optim_consts<T>& c, T gr) {
    return c.clipping ? mx_optim_clip(gr, c.clip) : gr;
}

// the new weight, clipped when clip_weights > 0
template <typename T> MX_FN T mx_optim_clipped_weight(const mx_optim_consts<T>& c, T y) {
    return c.clip_w ? mx_optim_clip(y, c.cw) : y;
}

// Element i of algorithm ALGO: reads w[i], g[i] and the states s0..s2 (those ALGO has),
// writes the states in place and the new weight to out[i] (which may be w[i]).
template <int ALGO, typename T>
MX_FN void mx_optim_elem(const mx_optim_consts<T>& c, T* out, const T* w, const T* g, T* s0,
                         T* s1, T* s2, int64_t i) {
    const T one = c.one;
    T x = w[i], gr, m, v;
    if constexpr (ALGO == MX_OPTIM_SGD) {
        gr = mx_optim_clipped(c, c.rescale * g[i]);
        out[i] = c.decay * x - c.lr * gr;
    } else if constexpr (ALGO == MX_OPTIM_SGD_MOM) {
        gr = mx_optim_clipped(c, c.rescale * g[i]);
        m = c.mom * s0[i] - c.lr * c.wd * x - c.lr * gr;
        s0[i] = m;
        out[i] = x + m;
    } else if constexpr (ALGO == MX_OPTIM_NAG_MOM) {
        gr = mx_optim_clipped(c, c.rescale * g[i]);
        gr = c.lr * (gr + c.wd * x);
        m = c.mom * s0[i];
        out[i] = x - m + (c.mom + one) * (m - gr);
        s0[i] = m - gr;
    } else if constexpr (ALGO == MX_OPTIM_ADAM || ALGO == MX_OPTIM_ADAMW) {
        if constexpr (ALGO == MX_OPTIM_ADAM) gr = mx_optim_clipped(c, c.rescale * g[i] + c.wd * x);
        else gr = mx_optim_clipped(c, c.rescale * g[i]);
        m = c.b1 * s0[i] + (one - c.b1) * gr;
        v = c.b2 * s1[i] + (one - c.b2) * gr * gr;
        s0[i] = m;
        s1[i] = v;
        if constexpr (ALGO == MX_OPTIM_ADAM) out[i] = x - c.lr * m / (mx::sqrt(v) + c.eps);
        else out[i] = x - c.eta * (c.lr * m / (mx::sqrt(v) + c.eps) + c.wd * x);
    } else if constexpr (ALGO == MX_OPTIM_RMSPROP) {
        gr = mx_optim_clipped(c, c.rescale * g[i] + c.wd * x);
        v = (one - c.g1) * (gr * gr) + c.g1 * s0[i];
        s0[i] = v;
        out[i] = mx_optim_clipped_weight(c, x - c.lr * (gr / mx::sqrt(v + c.eps)));
    } else if constexpr (ALGO == MX_OPTIM_RMSPROPALEX) {
        gr = mx_optim_clipped(c, c.rescale * g[i] + c.wd * x);
        v = (one - c.g1) * gr * gr + c.g1 * s0[i];
        m = (one - c.g1) * gr + c.g1 * s1[i];
        T d = c.g2 * s2[i] - c.lr * gr / mx::sqrt(v - m * m + c.eps);
        s0[i] = v;
        s1[i] = m;
        s2[i] = d;
        out[i] = mx_optim_clipped_weight(c, x + d);
    } else if constexpr (ALGO == MX_OPTIM_SIGNSGD) {
        out[i] = c.decay * x - c.lr * mx_optim_sign(g[i]);
    } else if constexpr (ALGO == MX_OPTIM_FTRL) {
        // s0 = z, s1 = n (MXNet's input order: weight, grad, z, n)
        gr = mx_optim_clipped(c, c.rescale * g[i]);
        T n_old = s1[i];
        v = n_old + gr * gr;
        m = s0[i] + gr - (mx::sqrt(v) - mx::sqrt(n_old)) * x / c.lr;
        s0[i] = m;
        s1[i] = v;
        if ((m >= 0 ? m : -m) > c.l1)
            out[i] = (mx_optim_sign(m) * c.l1 - m) / ((c.beta + mx::sqrt(v)) / c.lr + c.wd);
        else
            out[i] = 0;
    } else if constexpr (ALGO == MX_OPTIM_SIGNUM) {
        gr = mx_optim_clipped(c, c.rescale * g[i]);
        m = c.mom * s0[i] - (one - c.mom) * c.wd * x - (one - c.mom) * gr;
        s0[i] = m;
        out[i] = (one - c.lr * c.wd_lh) * x + c.lr * mx_optim_sign(m);
    } else if constexpr (ALGO == MX_OPTIM_FTML) {
        // s0 = d, s1 = v, s2 = z (MXNet's input order: weight, grad, d, v, z)
        gr = mx_optim_clipped(c, c.rescale * g[i] + c.wd * x);
        v = c.b2 * s1[i] + (one - c.b2) * gr * gr;
        T d = c.bc1 / c.lr * (mx::sqrt(v / c.bc2) + c.eps);
        m = c.b1 * s2[i] + (one - c.b1) * gr - (d - c.b1 * s0[i]) * x;
        s0[i] = d;
        s1[i] = v;
        s2[i] = m;
        out[i] = -m / d;
    } else if constexpr (ALGO == MX_OPTIM_LAMB1) {
        // s0 = mean, s1 = var; out gets the direction g, not a weight
        gr = mx_optim_clipped(c, c.rescale * g[i]);
        m = c.b1 * s0[i] + (one - c.b1) * gr;
        v = c.b2 * s1[i] + (one - c.b2) * gr * gr;
        s0[i] = m;
        s1[i] = v;
        out[i] = (m / c.bc1) / (mx::sqrt(v / c.bc2) + c.eps) + c.wd * x;
    }
}

// A scale that skips the update (MXNet's _adamw_update): NaN, infinite or 0. (r - r is 0
// exactly when r is finite.)
MX_FN bool mx_optim_skip(double r) { return !(r - r == 0.0) || r == 0.0; }

#ifndef __CUDACC__
// The CPU loop over elements [lo, hi): one loop per algorithm, so each vectorizes alone.
template <typename T>
static void mx_optim_run(int algo, const mx_optim_params* p, T* out, const T* w, const T* g,
                         T* s0, T* s1, T* s2, int64_t lo, int64_t hi) {
    const mx_optim_consts<T> c = mx_optim_prepare<T>(*p);
    switch (algo) {
#define MX_OPTIM_CASE(A) \
    case A: \
        for (int64_t i = lo; i < hi; i++) mx_optim_elem<A, T>(c, out, w, g, s0, s1, s2, i); \
        break;
    MX_OPTIM_CASE(MX_OPTIM_SGD) MX_OPTIM_CASE(MX_OPTIM_SGD_MOM) MX_OPTIM_CASE(MX_OPTIM_NAG_MOM)
    MX_OPTIM_CASE(MX_OPTIM_ADAM) MX_OPTIM_CASE(MX_OPTIM_ADAMW) MX_OPTIM_CASE(MX_OPTIM_RMSPROP)
    MX_OPTIM_CASE(MX_OPTIM_RMSPROPALEX) MX_OPTIM_CASE(MX_OPTIM_SIGNSGD)
    MX_OPTIM_CASE(MX_OPTIM_FTRL) MX_OPTIM_CASE(MX_OPTIM_SIGNUM) MX_OPTIM_CASE(MX_OPTIM_FTML)
    MX_OPTIM_CASE(MX_OPTIM_LAMB1)
#undef MX_OPTIM_CASE
    }
}
#endif
