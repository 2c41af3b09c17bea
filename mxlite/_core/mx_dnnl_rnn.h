// oneDNN's fused recurrent layers under mxlite's RNN op, inference only (wrapped by
// mxlite/_core/dnnl.pyx; the shared machinery is in mx_dnnl.h): one layer of lstm or
// rnn_tanh / rnn_relu or gru (oneDNN's linear-before-reset GRU, MXNet's and cuDNN's), one or
// two directions (two: outputs concatenated), over plain buffers.
//
// x (T, N, I) and y (T, N, D*H) in 'TNC'; h0, hy, c0, cy (D, N, H); bias (D, G, H), the
// sum of MXNet's two biases (gru: (D, 4, H), oneDNN's u, r, o and the h2h bias of o apart).
// wx and wh point at direction 0's i2h (G*H, I) and h2h (G*H, H) matrices, and `wx_strides`
// / `wh_strides` give the element strides of oneDNN's (layer, direction, input, gate,
// output) view of them (the step to direction 1's matrix is one stride), from which they
// are reordered into the primitive's layout. MXNet's LSTM gates i, f, g, o are oneDNN's
// order, so an LSTM's weights are read in place from the packed parameters; a GRU's come
// as a copy in oneDNN's order u (MXNet's z), r, o (n).
// Training stays on the reference kernels: the gradient graph reads every step's gates and
// cells, which oneDNN keeps only in its own workspace layout.
#pragma once
#include "mx_dnnl.h"

namespace mxdnnl {

struct RnnProblem {
    dims x, wx_strides, wh_strides;
    int64_t H, D;
    int mode;               // 0 lstm, 1 rnn_tanh, 2 rnn_relu, 3 gru
    dt type;
    int64_t gates() const { return mode == 0 ? 4 : mode == 3 ? 3 : 1; }
    int64_t bias_gates() const { return mode == 3 ? 4 : gates(); }
};

struct RnnFwd {
    std::string refused;
    dnnl::primitive prim;
    memory::desc scratch, src, iter, bias, dst;
    Move wx, wh;
};
inline Lru<RnnFwd>& rnn_fwd_cache() { static Lru<RnnFwd> t(MX_DNNL_CACHE); return t; }

inline int rnn_forward(const RnnProblem& p, void* x, void* wx, void* wh, void* bias, void* h0,
                       void* c0, void* y, void* hy, void* cy, char* err, size_t errn) {
    using tag = memory::format_tag;
    const int64_t T = p.x[0], N = p.x[1], I = p.x[2], G = p.gates(), H = p.H, D = p.D;
    auto make = [&] {
        auto e = std::make_shared<RnnFwd>();
        e->src = memory::desc({T, N, I}, p.type, tag::tnc);
        e->iter = memory::desc({1, D, N, H}, p.type, tag::ldnc);
        e->bias = memory::desc({1, D, p.bias_gates(), H}, p.type, tag::ldgo);
        e->dst = memory::desc({T, N, D * H}, p.type, tag::tnc);
        memory::desc wxu({1, D, I, G, H}, p.type, p.wx_strides);
        memory::desc whu({1, D, H, G, H}, p.type, p.wh_strides);
        memory::desc wxa({1, D, I, G, H}, p.type, tag::any), wha({1, D, H, G, H}, p.type, tag::any);
        auto dir = D == 2 ? dnnl::rnn_direction::bidirectional_concat
                          : dnnl::rnn_direction::unidirectional_left2right;
        memory::desc wxi, whi;
        if (p.mode == 0) {
            dnnl::lstm_forward::primitive_desc pd(
                engine(), dnnl::prop_kind::forward_inference, dir, e->src, e->iter, e->iter, wxa,
                wha, e->bias, e->dst, e->iter, e->iter, user_scratchpad());
            e->prim = dnnl::lstm_forward(pd);
            e->scratch = pd.scratchpad_desc();
            wxi = pd.weights_layer_desc();
            whi = pd.weights_iter_desc();
        } else if (p.mode == 3) {
            dnnl::lbr_gru_forward::primitive_desc pd(
                engine(), dnnl::prop_kind::forward_inference, dir, e->src, e->iter, wxa, wha,
                e->bias, e->dst, e->iter, user_scratchpad());
            e->prim = dnnl::lbr_gru_forward(pd);
            e->scratch = pd.scratchpad_desc();
            wxi = pd.weights_layer_desc();
            whi = pd.weights_iter_desc();
        } else {
            auto act = p.mode == 1 ? dnnl::algorithm::eltwise_tanh : dnnl::algorithm::eltwise_relu;
            dnnl::vanilla_rnn_forward::primitive_desc pd(
                engine(), dnnl::prop_kind::forward_inference, act, dir, e->src, e->iter, wxa,
                wha, e->bias, e->dst, e->iter, user_scratchpad());
            e->prim = dnnl::vanilla_rnn_forward(pd);
            e->scratch = pd.scratchpad_desc();
            wxi = pd.weights_layer_desc();
            whi = pd.weights_iter_desc();
        }
        e->wx = Move(wxu, wxi, true, false);
        e->wh = Move(whu, whi, true, false);
        return e;
    };
    auto run = [&](RnnFwd& e, dnnl::stream& s) {
        std::unordered_map<int, memory> args = {
            {DNNL_ARG_SRC_LAYER, memory(e.src, engine(), x)},
            {DNNL_ARG_SRC_ITER, memory(e.iter, engine(), h0)},
            {DNNL_ARG_WEIGHTS_LAYER, e.wx.in(s, wx, 0)},
            {DNNL_ARG_WEIGHTS_ITER, e.wh.in(s, wh, 1)},
            {DNNL_ARG_BIAS, memory(e.bias, engine(), bias)},
            {DNNL_ARG_DST_LAYER, memory(e.dst, engine(), y)},
            {DNNL_ARG_DST_ITER, memory(e.iter, engine(), hy)},
            {DNNL_ARG_SCRATCHPAD, scratch(e.scratch, 3)}};
        if (p.mode == 0) {
            args[DNNL_ARG_SRC_ITER_C] = memory(e.iter, engine(), c0);
            args[DNNL_ARG_DST_ITER_C] = memory(e.iter, engine(), cy);
        }
        e.prim.execute(s, args);
    };
    std::string key = key_of("rnn_fwd", {&p.x, &p.wx_strides, &p.wh_strides},
                             {p.H, p.D, p.mode, (int64_t)p.type});
    return cached_call(rnn_fwd_cache(), key, make, run, err, errn);
}

}  // namespace mxdnnl
