// oneDNN's softmax backward under mxlite's _softmax_grad and _log_softmax_grad (wrapped by
// mxlite/_core/dnnl.pyx; the shared machinery is in mx_dnnl.h). One pass over the plain
// row-major buffers: dx = y * (g - sum(g * y)) (softmax) or dx = g - exp(y) * sum(g)
// (log-softmax, y its output), the sums along `axis`. Returns 0, or -1 with oneDNN's
// message in `err` (the caller then composes the registered ops).
#pragma once
#include "mx_dnnl.h"

namespace mxdnnl {

struct SoftmaxProblem {
    dims shape;
    int64_t axis;
    bool log;
    dt type;
};

struct SoftmaxBwd {
    std::string refused;
    dnnl::softmax_backward prim;
    memory::desc data, scratch;
};
inline Lru<SoftmaxBwd>& softmax_bwd_cache() { static Lru<SoftmaxBwd> t(MX_DNNL_CACHE); return t; }

inline int softmax_backward(const SoftmaxProblem& p, void* y, void* g, void* dx, char* err,
                            size_t errn) {
    auto make = [&] {
        auto e = std::make_shared<SoftmaxBwd>();
        e->data = plain(p.shape, p.type);
        auto algo = p.log ? dnnl::algorithm::softmax_log : dnnl::algorithm::softmax_accurate;
        dnnl::softmax_forward::primitive_desc hint(
            engine(), dnnl::prop_kind::forward_training, algo, e->data, e->data, (int)p.axis);
        dnnl::softmax_backward::primitive_desc pd(engine(), algo, e->data, e->data, e->data,
                                                  (int)p.axis, hint, user_scratchpad());
        e->prim = dnnl::softmax_backward(pd);
        e->scratch = pd.scratchpad_desc();
        return e;
    };
    auto run = [&](SoftmaxBwd& e, dnnl::stream& s) {
        e.prim.execute(s, {{DNNL_ARG_DST, memory(e.data, engine(), y)},
                           {DNNL_ARG_DIFF_DST, memory(e.data, engine(), g)},
                           {DNNL_ARG_DIFF_SRC, memory(e.data, engine(), dx)},
                           {DNNL_ARG_SCRATCHPAD, scratch(e.scratch, 3)}});
    };
    std::string key = key_of("softmax_bwd", {&p.shape}, {p.axis, p.log, (int64_t)p.type});
    return cached_call(softmax_bwd_cache(), key, make, run, err, errn);
}

}  // namespace mxdnnl
