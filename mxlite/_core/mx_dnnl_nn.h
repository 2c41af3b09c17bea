// oneDNN pooling, batch normalisation and layer normalisation under mxlite's registered
// operators (mxlite/_core/dnnl.pyx wraps these; the shared machinery is in mx_dnnl.h).
//
// Every function takes C-contiguous float32 (or bfloat16) buffers in mxlite's own layouts
// and returns 0, or -1 with oneDNN's message in `err` (the caller then runs the reference
// kernel). These primitives run on the plain layouts the user buffers have (oneDNN's
// pooling and normalisation kernels take plain NC* layouts directly), so no reorder is
// paid around them; the per-channel vectors (gamma, beta, statistics) are f32 always.
#pragma once
#include "mx_dnnl.h"

namespace mxdnnl {

// ---- pooling -----------------------------------------------------------------------------
// x: (N, C, *in), y: (N, C, *out); kind 0 max, 1 avg counting the padding, 2 avg counting
// the input elements only, 3 sum (forward only: the avg that divides by the whole kernel,
// times the kernel's size); pad_r makes the last window end where the output size says.
// xs, ys: element strides (empty: row-major), as ConvProblem's: a channels-last array comes
// as its channels-first view, and the primitive runs on that layout (the data and its
// gradient share x's strides).
struct PoolProblem {
    dims x, y, kernel, stride, pad_l, pad_r, xs, ys;
    int kind;
    dt type;
    memory::desc xd() const { return user_desc(x, xs, type); }
    memory::desc yd() const { return user_desc(y, ys, type); }
    dnnl::algorithm algo() const {
        return kind == 0 ? dnnl::algorithm::pooling_max
               : kind == 2 ? dnnl::algorithm::pooling_avg_exclude_padding
                           : dnnl::algorithm::pooling_avg_include_padding;
    }
    dnnl::pooling_forward::primitive_desc forward(dnnl::prop_kind prop) const {
        dnnl::primitive_attr attr = user_scratchpad();
        if (kind == 3) {
            float size = 1;
            for (int64_t k : kernel) size *= (float)k;
            dnnl::post_ops ops;
            ops.append_eltwise(dnnl::algorithm::eltwise_linear, size, 0.f);
            attr.set_post_ops(ops);
        }
        dims dilation(stride.size(), 0);
        return dnnl::pooling_forward::primitive_desc(engine(), prop, algo(), xd(), yd(), stride,
                                                     kernel, dilation, pad_l, pad_r, attr);
    }
    std::string key(const char* op) const {
        return key_of(op, {&x, &y, &kernel, &stride, &pad_l, &pad_r, &xs, &ys},
                      {kind, (int64_t)type});
    }
};

struct PoolFwd {
    std::string refused;
    dnnl::pooling_forward prim;
    memory::desc scratch, ws;
};
struct PoolBwd {
    std::string refused;
    dnnl::pooling_forward fwd;     // max: the training forward that marks each window's maximum
    dnnl::pooling_backward prim;
    memory::desc fwd_scratch, scratch, ws;
};
inline Lru<PoolFwd>& pool_fwd_cache() { static Lru<PoolFwd> t(MX_DNNL_CACHE); return t; }
inline Lru<PoolBwd>& pool_bwd_cache() { static Lru<PoolBwd> t(MX_DNNL_CACHE); return t; }

inline int pool_forward(const PoolProblem& p, void* x, void* y, char* err, size_t errn) {
    auto make = [&] {
        auto pd = p.forward(dnnl::prop_kind::forward_inference);
        auto e = std::make_shared<PoolFwd>();
        e->prim = dnnl::pooling_forward(pd);
        e->scratch = pd.scratchpad_desc();
        return e;
    };
    auto run = [&](PoolFwd& e, dnnl::stream& s) {
        e.prim.execute(s, {{DNNL_ARG_SRC, memory(p.xd(), engine(), x)},
                           {DNNL_ARG_DST, memory(p.yd(), engine(), y)},
                           {DNNL_ARG_SCRATCHPAD, scratch(e.scratch, 3)}});
    };
    return cached_call(pool_fwd_cache(), p.key("pool_fwd"), make, run, err, errn);
}

// gx = the input gradient of the pooling at output gradient gy. Max pooling needs the
// data x: a training forward (its output into scratch) marks each window's maximum in a
// workspace the backward reads; avg ignores x (may be null).
inline int pool_backward(const PoolProblem& p, void* x, void* gy, void* gx, char* err,
                         size_t errn) {
    auto make = [&] {
        auto hint = p.forward(dnnl::prop_kind::forward_training);
        dims dilation(p.stride.size(), 0);
        dnnl::pooling_backward::primitive_desc pd(
            engine(), p.algo(), p.xd(), p.yd(), p.stride, p.kernel,
            dilation, p.pad_l, p.pad_r, hint, user_scratchpad());
        auto e = std::make_shared<PoolBwd>();
        e->fwd = dnnl::pooling_forward(hint);
        e->prim = dnnl::pooling_backward(pd);
        e->fwd_scratch = hint.scratchpad_desc();
        e->scratch = pd.scratchpad_desc();
        e->ws = hint.workspace_desc();
        return e;
    };
    auto run = [&](PoolBwd& e, dnnl::stream& s) {
        std::unordered_map<int, memory> args = {
            {DNNL_ARG_DIFF_DST, memory(p.yd(), engine(), gy)},
            {DNNL_ARG_DIFF_SRC, memory(p.xd(), engine(), gx)},
            {DNNL_ARG_SCRATCHPAD, scratch(e.scratch, 3)}};
        if (p.kind == 0) {
            memory ws = scratch(e.ws, 1);
            e.fwd.execute(s, {{DNNL_ARG_SRC, memory(p.xd(), engine(), x)},
                              {DNNL_ARG_DST, scratch(p.yd(), 0)},
                              {DNNL_ARG_WORKSPACE, ws},
                              {DNNL_ARG_SCRATCHPAD, scratch(e.fwd_scratch, 2)}});
            args[DNNL_ARG_WORKSPACE] = ws;
        }
        e.prim.execute(s, args);
    };
    return cached_call(pool_bwd_cache(), p.key("pool_bwd"), make, run, err, errn);
}

// ---- normalisation ---------------------------------------------------------------------------
// Batch normalisation of x read as (A, C, B) over A and B per channel C; layer normalisation
// of x read as (P, Q) over Q per row. `stats` true: compute the mean and biased variance
// (written to mean/var); false: read them. gamma/beta null: no affine part (y = xhat).
struct NormProblem {
    dims x;
    float eps;
    bool stats;
    dt type;
    dnnl::normalization_flags flags(bool affine) const {
        auto f = dnnl::normalization_flags::none;
        if (!stats) f = f | dnnl::normalization_flags::use_global_stats;
        if (affine)
            f = f | dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
        return f;
    }
    dnnl::prop_kind prop() const {
        return stats ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;
    }
    std::string key(const char* op, bool affine) const {
        int64_t e;
        std::memcpy(&e, &eps, sizeof eps);
        return key_of(op, {&x}, {e, stats, affine, (int64_t)type});
    }
};

struct BnormFwd {
    std::string refused;
    dnnl::batch_normalization_forward prim;
    memory::desc scratch, vec;
    Move x, y;
};

// The layout batch normalisation runs on: (A, C, 1) is channels-last memory already (oneDNN's
// JIT kernels take nwc; its plain ncw kernel is a slow reference loop); else C in blocks of 16.
inline memory::desc bnorm_layout(const NormProblem& p) {
    if (p.x[2] == 1) return memory::desc(p.x, p.type, memory::format_tag::acb);
    if (p.x[1] % 16 == 0) return memory::desc(p.x, p.type, memory::format_tag::aBc16b);
    return plain(p.x, p.type);
}
struct LnormFwd {
    std::string refused;
    dnnl::layer_normalization_forward prim;
    memory::desc scratch, vec, stat;
};
inline Lru<BnormFwd>& bnorm_fwd_cache() { static Lru<BnormFwd> t(MX_DNNL_CACHE); return t; }
inline Lru<LnormFwd>& lnorm_fwd_cache() { static Lru<LnormFwd> t(MX_DNNL_CACHE); return t; }

inline void add_affine(std::unordered_map<int, memory>& args, const memory::desc& vec,
                       void* gamma, void* beta) {
    if (!gamma) return;
    args[DNNL_ARG_SCALE] = memory(vec, engine(), gamma);
    args[DNNL_ARG_SHIFT] = memory(vec, engine(), beta);
}

// x, y: (A, C, B); mean, var: (C,) f32.
inline int bnorm_forward(const NormProblem& p, void* x, void* gamma, void* beta, void* mean,
                         void* var, void* y, char* err, size_t errn) {
    bool affine = gamma != nullptr;
    auto make = [&] {
        memory::desc inner = bnorm_layout(p);
        dnnl::batch_normalization_forward::primitive_desc pd(
            engine(), p.prop(), inner, inner, p.eps, p.flags(affine), user_scratchpad());
        auto e = std::make_shared<BnormFwd>();
        e->prim = dnnl::batch_normalization_forward(pd);
        e->scratch = pd.scratchpad_desc();
        e->vec = plain({p.x[1]}, dt::f32);
        // (A, C, 1): the user's memory is read as nwc directly (the same bytes)
        memory::desc user = p.x[2] == 1 ? inner : plain(p.x, p.type);
        e->x = Move(user, inner, true, false);
        e->y = Move(user, inner, false, true);
        return e;
    };
    auto run = [&](BnormFwd& e, dnnl::stream& s) {
        memory xm = e.x.in(s, x, 0);
        memory ym = e.y.out(y, 1);
        std::unordered_map<int, memory> args = {
            {DNNL_ARG_SRC, xm},
            {DNNL_ARG_DST, ym},
            {DNNL_ARG_MEAN, memory(e.vec, engine(), mean)},
            {DNNL_ARG_VARIANCE, memory(e.vec, engine(), var)},
            {DNNL_ARG_SCRATCHPAD, scratch(e.scratch, 3)}};
        add_affine(args, e.vec, gamma, beta);
        e.prim.execute(s, args);
        e.y.back(s, ym, y);
    };
    return cached_call(bnorm_fwd_cache(), p.key("bnorm_fwd", affine), make, run, err, errn);
}

// x, y: (P, Q); gamma, beta: (Q,) f32; mean, var: (P,) f32.
inline int lnorm_forward(const NormProblem& p, void* x, void* gamma, void* beta, void* mean,
                         void* var, void* y, char* err, size_t errn) {
    bool affine = gamma != nullptr;
    auto make = [&] {
        auto e = std::make_shared<LnormFwd>();
        e->stat = plain({p.x[0]}, dt::f32);
        dnnl::layer_normalization_forward::primitive_desc pd(
            engine(), p.prop(), plain(p.x, p.type), plain(p.x, p.type), e->stat, p.eps,
            p.flags(affine), user_scratchpad());
        e->prim = dnnl::layer_normalization_forward(pd);
        e->scratch = pd.scratchpad_desc();
        e->vec = plain({p.x[1]}, dt::f32);
        return e;
    };
    auto run = [&](LnormFwd& e, dnnl::stream& s) {
        std::unordered_map<int, memory> args = {
            {DNNL_ARG_SRC, memory(plain(p.x, p.type), engine(), x)},
            {DNNL_ARG_DST, memory(plain(p.x, p.type), engine(), y)},
            {DNNL_ARG_MEAN, memory(e.stat, engine(), mean)},
            {DNNL_ARG_VARIANCE, memory(e.stat, engine(), var)},
            {DNNL_ARG_SCRATCHPAD, scratch(e.scratch, 3)}};
        add_affine(args, e.vec, gamma, beta);
        e.prim.execute(s, args);
    };
    return cached_call(lnorm_fwd_cache(), p.key("lnorm_fwd", affine), make, run, err, errn);
}

inline size_t cached_nn_primitives() {
    return pool_fwd_cache().size() + pool_bwd_cache().size() + bnorm_fwd_cache().size() +
           lnorm_fwd_cache().size();
}

inline void clear_nn_caches() {
    pool_fwd_cache().clear();
    pool_bwd_cache().clear();
    bnorm_fwd_cache().clear();
    lnorm_fwd_cache().clear();
}

}  // namespace mxdnnl
