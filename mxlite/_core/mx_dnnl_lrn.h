// oneDNN's local response normalisation across channels under mxlite's LRN (wrapped by
// mxlite/_core/dnnl.pyx; the shared machinery is in mx_dnnl.h). The forward pass on the plain
// (N, C, H, W) buffers: y = x / (k + alpha / size * sum(x^2 over `size` channels))^beta,
// the window centred on the channel (`size` odd) and cut at the first and last channels.
// Returns 0, or -1 with oneDNN's message in `err` (the caller then runs the reference).
#pragma once
#include "mx_dnnl.h"

namespace mxdnnl {

struct LrnProblem {
    dims x;
    int64_t size;
    float alpha, beta, k;
    dt type;
};

struct LrnFwd {
    std::string refused;
    dnnl::lrn_forward prim;
    memory::desc data, scratch;
};
inline Lru<LrnFwd>& lrn_fwd_cache() { static Lru<LrnFwd> t(MX_DNNL_CACHE); return t; }

// The bits of a parameter, for the cache key (no two values share them).
inline int64_t bits(double v) {
    int64_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
}

inline int lrn_forward(const LrnProblem& p, void* x, void* y, char* err, size_t errn) {
    auto make = [&] {
        auto e = std::make_shared<LrnFwd>();
        e->data = plain(p.x, p.type);
        dnnl::lrn_forward::primitive_desc pd(
            engine(), dnnl::prop_kind::forward_inference, dnnl::algorithm::lrn_across_channels,
            e->data, e->data, p.size, p.alpha, p.beta, p.k, user_scratchpad());
        e->prim = dnnl::lrn_forward(pd);
        e->scratch = pd.scratchpad_desc();
        return e;
    };
    auto run = [&](LrnFwd& e, dnnl::stream& s) {
        e.prim.execute(s, {{DNNL_ARG_SRC, memory(e.data, engine(), x)},
                           {DNNL_ARG_DST, memory(e.data, engine(), y)},
                           {DNNL_ARG_SCRATCHPAD, scratch(e.scratch, 3)}});
    };
    std::string key = key_of("lrn_fwd", {&p.x},
                             {p.size, bits(p.alpha), bits(p.beta), bits(p.k), (int64_t)p.type});
    return cached_call(lrn_fwd_cache(), key, make, run, err, errn);
}

}  // namespace mxdnnl
