// oneDNN primitives under mxlite's registered operators (mxlite/_core/dnnl.pyx wraps these).
//
// Every function takes C-contiguous (plain, row-major) buffers of float32 or bfloat16 with
// their dims, as the registered ops store them, and returns 0, or -1 with a message in
// `err` when oneDNN refuses the problem (the caller then runs the reference kernel). Inside,
// a primitive runs on the layout oneDNN prefers (format_tag::any: blocked, e.g. nChw16c):
// inputs are reordered in, outputs out.
//
// Primitives are cached by their problem (a key string of op, dims and attributes) in a
// least-recently-used table of at most MX_DNNL_CACHE entries, shared by all threads under a
// mutex; execution itself runs outside the lock with a per-call scratchpad, so calls from
// several threads never share mutable state.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <list>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"
#include "mx_dnnl_weights.h"

namespace mxdnnl {

using dnnl::memory;
using dims = memory::dims;
using dt = memory::data_type;

// Entries per kind of primitive: a network's distinct layer shapes, times a few batch sizes.
// A convolution primitive holds its JIT code (about 0.15 MB), so the tables stay small and
// oneDNN's own primitive cache is switched off: these tables are the only cache.
static const size_t MX_DNNL_CACHE = 64;

inline dnnl::engine& engine() {
    static dnnl::engine eng = [] {
        dnnl::set_primitive_cache_capacity(0);
        return dnnl::engine(dnnl::engine::kind::cpu, 0);
    }();
    return eng;
}

inline dims row_major(const dims& d) {
    dims s(d.size());
    int64_t step = 1;
    for (size_t i = d.size(); i-- > 0;) {
        s[i] = step;
        step *= d[i];
    }
    return s;
}

inline memory::desc plain(const dims& d, dt t) { return memory::desc(d, t, row_major(d)); }
// Primitive attributes with a scratchpad the caller passes (per call: no shared state).
inline dnnl::primitive_attr user_scratchpad() {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return attr;
}

inline memory::desc any(const dims& d, dt t) {
    return memory::desc(d, t, memory::format_tag::any);
}

// A bounded LRU table of shared objects keyed by string.
template <class T>
class Lru {
   public:
    explicit Lru(size_t cap) : cap_(cap) {}
    std::shared_ptr<T> get(const std::string& key) {
        std::lock_guard<std::mutex> g(mu_);
        auto it = map_.find(key);
        if (it == map_.end()) return nullptr;
        order_.splice(order_.begin(), order_, it->second.second);
        return it->second.first;
    }
    void put(const std::string& key, std::shared_ptr<T> value) {
        std::lock_guard<std::mutex> g(mu_);
        auto it = map_.find(key);
        if (it != map_.end()) {
            it->second.first = value;
            order_.splice(order_.begin(), order_, it->second.second);
            return;
        }
        order_.push_front(key);
        map_[key] = {value, order_.begin()};
        while (map_.size() > cap_) {
            map_.erase(order_.back());
            order_.pop_back();
        }
    }
    void clear() {
        std::lock_guard<std::mutex> g(mu_);
        map_.clear();
        order_.clear();
    }
    size_t size() {
        std::lock_guard<std::mutex> g(mu_);
        return map_.size();
    }

   private:
    size_t cap_;
    std::mutex mu_;
    std::list<std::string> order_;
    std::unordered_map<std::string,
                       std::pair<std::shared_ptr<T>, std::list<std::string>::iterator>>
        map_;
};

// What a thread's Arena keeps after a call: a buffer over this many bytes is freed when
// its call ends. mxlite.ops.onednn sets 0 when mxlite's malloc settings keep freed memory in
// the process (mxlite.device.memory: then a freed scratch buffer is reused by the next
// allocation, numpy's included, without page faults, and the Arena would only hold a
// second copy of that memory), else 64 MiB.
inline size_t& arena_keep_bytes() {
    static size_t keep = size_t(64) << 20;
    return keep;
}

// Per-thread scratch buffers (a blocked copy of an input or output, a primitive's
// scratchpad), reused from call to call so a step does not page-fault fresh memory for each
// primitive. A buffer over arena_keep_bytes() is freed when its call ends, so what a thread
// keeps is bounded whatever sizes it has seen.
class Arena {
   public:
    static const size_t SLOTS = 6;
    ~Arena() {
        for (auto& s : slots_) std::free(s.ptr);
    }
    void* get(size_t slot, size_t bytes) {
        Slot& s = slots_[slot];
        if (s.bytes < bytes) {
            std::free(s.ptr);
            s.ptr = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
            if (!s.ptr) throw std::bad_alloc();
            s.bytes = bytes;
        }
        return s.ptr;
    }
    // Keep `p` alive until this call ends (a cached weight copy another thread may evict).
    void pin(std::shared_ptr<void> p) { pins_.push_back(std::move(p)); }
    void trim() {
        pins_.clear();
        for (auto& s : slots_)
            if (s.bytes > arena_keep_bytes()) {
                std::free(s.ptr);
                s.ptr = nullptr;
                s.bytes = 0;
            }
    }

   private:
    struct Slot {
        void* ptr = nullptr;
        size_t bytes = 0;
    };
    Slot slots_[SLOTS];
    std::vector<std::shared_ptr<void>> pins_;
};

inline Arena& arena() {
    thread_local Arena a;
    return a;
}

// Scratch memory of descriptor `md` in arena slot `slot`.
inline memory scratch(const memory::desc& md, size_t slot) {
    return memory(md, engine(), arena().get(slot, md.get_size()));
}

// A move between a plain user buffer and the primitive's layout (none when they agree).
struct Move {
    memory::desc user, inner;
    bool needed = false;
    dnnl::reorder to_inner, to_user;
    Move() = default;
    Move(const memory::desc& u, const memory::desc& in, bool in_dir, bool out_dir)
        : user(u), inner(in), needed(u != in) {
        if (!needed) return;
        if (in_dir) to_inner = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), u, engine(), in));
        if (out_dir) to_user = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), in, engine(), u));
    }
    // The primitive's view of a user input (reordered into a new buffer when needed).
    memory in(dnnl::stream& s, void* ptr, size_t slot) const {
        memory u(user, engine(), ptr);
        if (!needed) return u;
        memory m = scratch(inner, slot);
        to_inner.execute(s, u, m);
        return m;
    }
    // A buffer for an output: the user's own, or scratch in the primitive's layout.
    memory out(void* ptr, size_t slot) const {
        return needed ? scratch(inner, slot) : memory(user, engine(), ptr);
    }
    void back(dnnl::stream& s, memory& m, void* ptr) const {
        if (!needed) return;
        memory u(user, engine(), ptr);
        to_user.execute(s, m, u);
    }
};

// The primitive's view of a weight (Move `m`, user buffer `w`, arena slot `slot` for a
// per-call copy): a tracked weight (st.serial != 0) with the cache on is reordered once per
// version into a kept copy (mx_dnnl_weights.h); any other is moved in per call.
inline memory weight_in(dnnl::stream& s, const Move& m, void* w, const WeightStamp& st,
                        size_t slot) {
    if (!m.needed || st.serial == 0 || !weight_cache().on()) return m.in(s, w, slot);
    std::string key = weight_key(st.serial, w, m.user, m.inner);
    std::shared_ptr<WeightCopy> c = weight_cache().get(key, st.version);
    if (!c) {
        c = new_weight_copy(m.inner.get_size(), st.version);
        memory u(m.user, engine(), w), in(m.inner, engine(), c->data.get());
        m.to_inner.execute(s, u, in);
        s.wait();
        weight_cache().put(key, c);
    }
    arena().pin(c);
    return memory(m.inner, engine(), c->data.get());
}

// A problem oneDNN could run but mxlite sends to the reference kernel (cached like a
// primitive, so the decision is made once per problem).
struct Refusal : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The scratch a primitive would take beyond its operands: blocked copies (a channel count
// below 16 is padded up to 16 in nChw16c, up to 16x an operand's memory) and its
// scratchpad. Past twice the operands' bytes plus 64 MiB the reference kernel runs
// instead, so oneDNN never multiplies a call's memory (a 1-channel image of 2 GiB would
// need 32 GiB blocked).
inline void check_scratch(std::initializer_list<const Move*> moves, const memory::desc& pad) {
    size_t user = 0, extra = pad.get_size();
    for (const Move* m : moves) {
        user += m->user.get_size();
        if (m->needed) extra += m->inner.get_size();
    }
    if (extra > 2 * user + (size_t(64) << 20))
        throw Refusal("its blocked copies and scratchpad would take " + std::to_string(extra) +
                      " bytes for " + std::to_string(user) + " bytes of operands");
}

// check_scratch's verdict kept in an entry's `refused` (empty: runs on oneDNN).
inline void refuse_if(std::string& refused, std::initializer_list<const Move*> moves,
                      const memory::desc& pad) {
    try {
        check_scratch(moves, pad);
    } catch (const Refusal& r) {
        refused = r.what();
    }
}

inline std::string key_of(const char* op, std::initializer_list<const dims*> parts,
                          std::initializer_list<int64_t> extra) {
    std::string k(op);
    for (const dims* d : parts) {
        k += '|';
        for (int64_t v : *d) {
            k += std::to_string(v);
            k += ',';
        }
    }
    k += '|';
    for (int64_t v : extra) {
        k += std::to_string(v);
        k += ',';
    }
    return k;
}

inline void set_error(char* err, size_t n, const char* what) {
    if (err && n) {
        std::strncpy(err, what, n - 1);
        err[n - 1] = 0;
    }
}

// ---- convolution ------------------------------------------------------------------------
// x: (N, C, *in), w: (G, O/G, C/G, *k) (G == 1: (O, C, *k)), y: (N, O, *out); dilation in
// oneDNN's convention (0 = dense); pad_l/pad_r per spatial axis. xs, ws, ys: the element
// strides of the user's arrays in that axis order, or empty for row-major ones: a
// channels-last array (NWC, NHWC, NDHWC; its weight (O, *k, C/G)) comes as the strided
// channels-first view of its memory. Where x and y are channels last, the primitive runs
// on that layout itself (oneDNN's nhwc kernels: no reorder of the activations), else on
// the layout oneDNN prefers.
inline bool channels_last(const dims& d, const dims& s) {
    if (s.size() != d.size() || d.size() < 3) return false;
    int64_t step = d[1];                       // the channels are innermost
    if (s[1] != 1) return false;
    for (size_t i = d.size(); i-- > 2;) {
        if (d[i] != 1 && s[i] != step) return false;
        step *= d[i];
    }
    return d[0] == 1 || s[0] == step;
}

inline memory::desc user_desc(const dims& d, const dims& s, dt t) {
    return memory::desc(d, t, s.empty() ? row_major(d) : s);
}

struct ConvProblem {
    dims x, w, b, y, stride, dilate, pad_l, pad_r, xs, ws, ys;
    dt type;
    bool last() const { return channels_last(x, xs) && channels_last(y, ys); }
    memory::desc act(const dims& d, const dims& s) const {
        return last() ? user_desc(d, s, type) : any(d, type);
    }
    memory::desc xd() const { return act(x, xs); }
    memory::desc wd() const { return any(w, type); }
    memory::desc yd() const { return act(y, ys); }
    memory::desc ux() const { return user_desc(x, xs, type); }
    memory::desc uw() const { return user_desc(w, ws, type); }
    memory::desc uy() const { return user_desc(y, ys, type); }
    dnnl::convolution_forward::primitive_desc forward(bool bias) const {
        return dnnl::convolution_forward::primitive_desc(
            engine(), dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
            xd(), wd(), bias ? memory::desc(b, type, memory::format_tag::a) : memory::desc(),
            yd(), stride, dilate, pad_l, pad_r, user_scratchpad());
    }
    std::string key(const char* op, int64_t extra) const {
        return key_of(op, {&x, &w, &y, &stride, &dilate, &pad_l, &pad_r, &xs, &ws, &ys},
                      {(int64_t)type, extra});
    }
};

struct ConvFwd {
    std::string refused;
    dnnl::convolution_forward prim;
    memory::desc scratch, bias;
    Move x, w, y;
};
struct ConvBwdData {
    std::string refused;
    dnnl::convolution_backward_data prim;
    memory::desc scratch;
    Move gy, w, gx;
};
struct ConvBwdWeights {
    std::string refused;
    dnnl::convolution_backward_weights prim;
    memory::desc scratch;
    Move x, gy, gw;
};

inline Lru<ConvFwd>& conv_fwd_cache() { static Lru<ConvFwd> t(MX_DNNL_CACHE); return t; }
inline Lru<ConvBwdData>& conv_bwd_data_cache() { static Lru<ConvBwdData> t(MX_DNNL_CACHE); return t; }
inline Lru<ConvBwdWeights>& conv_bwd_weights_cache() { static Lru<ConvBwdWeights> t(MX_DNNL_CACHE); return t; }

// The call protocol of every wrapper: the entry of `key` in `table` (built by `make` on a
// miss; a refusal is cached like a primitive), `run(entry, stream)`, then 0; or -1 with the
// message in `err` (dnnl::error, Refusal, bad_alloc), so the caller runs the reference.
template <class E, class Make, class Run>
inline int cached_call(Lru<E>& table, const std::string& key, Make make, Run run, char* err,
                       size_t errn) {
    try {
        auto e = table.get(key);
        if (!e) {
            e = make();
            table.put(key, e);
        }
        if (!e->refused.empty()) throw Refusal(e->refused);
        dnnl::stream s(engine());
        run(*e, s);
        s.wait();
        arena().trim();
        return 0;
    } catch (const std::exception& ex) {
        set_error(err, errn, ex.what());
        return -1;
    }
}

// A primitive with two inputs moved in and one output moved out (the convolution's three
// passes; the forward's optional bias is passed as it is, in `extra`).
inline void run_moved(const dnnl::primitive& prim, dnnl::stream& s, const memory::desc& pad,
                      const Move& m0, int a0, void* p0, int a1, const memory& in1,
                      const Move& mo, int ao, void* po,
                      std::unordered_map<int, memory> extra = {}) {
    memory in0 = m0.in(s, p0, 0), out = mo.out(po, 2);
    extra[a0] = in0;
    extra[a1] = in1;
    extra[ao] = out;
    extra[DNNL_ARG_SCRATCHPAD] = scratch(pad, 3);
    prim.execute(s, extra);
    mo.back(s, out, po);
}

inline void run_moved(const dnnl::primitive& prim, dnnl::stream& s, const memory::desc& pad,
                      const Move& m0, int a0, void* p0, const Move& m1, int a1, void* p1,
                      const Move& mo, int ao, void* po,
                      std::unordered_map<int, memory> extra = {}) {
    run_moved(prim, s, pad, m0, a0, p0, a1, m1.in(s, p1, 1), mo, ao, po, std::move(extra));
}

// A convolution pass over a large batch runs in chunks of images: its blocked copies of
// the activations (input and output: up to their full size again, in the Arena for the
// call) then take at most about CONV_CHUNK_BYTES. Measured on ResNet-50 inference at batch
// 32: peak memory down by the size of two 56x56x256 activations; a chunk of several images
// keeps oneDNN's per-image speed. `pass(q, i)` runs problem `q` (the batch cut to its
// chunk) on the images from `i`; the first failure is returned (the caller's reference
// kernel then redoes the whole call).
constexpr size_t CONV_CHUNK_BYTES = size_t(32) << 20;

template <class Pass>
inline int by_batch_chunks(const ConvProblem& p, Pass pass) {
    size_t per_image = 0;
    for (const dims* d : {&p.x, &p.y}) {
        size_t n = 1;
        for (size_t i = 1; i < d->size(); ++i) n *= (size_t)(*d)[i];
        per_image += n;
    }
    per_image *= p.type == dt::f32 ? 4 : 2;
    int64_t batch = p.x[0], chunk = batch;
    if (batch > 1 && per_image * (size_t)batch > CONV_CHUNK_BYTES)
        chunk = std::max<int64_t>(1, (int64_t)(CONV_CHUNK_BYTES / std::max<size_t>(per_image, 1)));
    if (chunk >= batch) return pass(p, 0);
    for (int64_t i = 0; i < batch; i += chunk) {
        ConvProblem q = p;
        q.x[0] = q.y[0] = std::min(chunk, batch - i);
        int rc = pass(q, i);
        if (rc) return rc;
    }
    return 0;
}

// The address of image `i` of an (N, ...) array of `d` with elements of `type`.
inline void* image_at(void* base, const dims& d, dt type, int64_t i) {
    size_t n = 1;
    for (size_t k = 1; k < d.size(); ++k) n *= (size_t)d[k];
    return static_cast<char*>(base) + (size_t)i * n * (type == dt::f32 ? 4 : 2);
}

inline int conv_forward_whole(const ConvProblem& p, void* x, void* w, void* b, void* y,
                              const WeightStamp& st, char* err, size_t errn) {
    auto make = [&] {
        auto pd = p.forward(b != nullptr);
        auto e = std::make_shared<ConvFwd>();
        e->prim = dnnl::convolution_forward(pd);
        e->scratch = pd.scratchpad_desc();
        e->bias = memory::desc(p.b, p.type, memory::format_tag::a);
        e->x = Move(p.ux(), pd.src_desc(), true, false);
        e->w = Move(p.uw(), pd.weights_desc(), true, false);
        e->y = Move(p.uy(), pd.dst_desc(), false, true);
        refuse_if(e->refused, {&e->x, &e->w, &e->y}, e->scratch);
        return e;
    };
    auto run = [&](ConvFwd& e, dnnl::stream& s) {
        std::unordered_map<int, memory> bias;
        if (b) bias[DNNL_ARG_BIAS] = memory(e.bias, engine(), b);
        run_moved(e.prim, s, e.scratch, e.x, DNNL_ARG_SRC, x, DNNL_ARG_WEIGHTS,
                  weight_in(s, e.w, w, st, 1), e.y, DNNL_ARG_DST, y, bias);
    };
    return cached_call(conv_fwd_cache(), p.key("conv_fwd", b != nullptr), make, run, err, errn);
}

inline int conv_forward(const ConvProblem& p, void* x, void* w, void* b, void* y,
                        const WeightStamp& st, char* err, size_t errn) {
    return by_batch_chunks(p, [&](const ConvProblem& q, int64_t i) {
        return conv_forward_whole(q, image_at(x, p.x, p.type, i), w, b,
                                  image_at(y, p.y, p.type, i), st, err, errn);
    });
}

inline int conv_backward_data_whole(const ConvProblem& p, void* gy, void* w, void* gx,
                                    const WeightStamp& st, char* err, size_t errn) {
    auto make = [&] {
        dnnl::convolution_backward_data::primitive_desc pd(
            engine(), dnnl::algorithm::convolution_direct, p.xd(), p.wd(), p.yd(), p.stride,
            p.dilate, p.pad_l, p.pad_r, p.forward(false), user_scratchpad());
        auto e = std::make_shared<ConvBwdData>();
        e->prim = dnnl::convolution_backward_data(pd);
        e->scratch = pd.scratchpad_desc();
        e->gy = Move(p.uy(), pd.diff_dst_desc(), true, false);
        e->w = Move(p.uw(), pd.weights_desc(), true, false);
        e->gx = Move(p.ux(), pd.diff_src_desc(), false, true);
        refuse_if(e->refused, {&e->gy, &e->w, &e->gx}, e->scratch);
        return e;
    };
    auto run = [&](ConvBwdData& e, dnnl::stream& s) {
        run_moved(e.prim, s, e.scratch, e.gy, DNNL_ARG_DIFF_DST, gy, DNNL_ARG_WEIGHTS,
                  weight_in(s, e.w, w, st, 1), e.gx, DNNL_ARG_DIFF_SRC, gx);
    };
    return cached_call(conv_bwd_data_cache(), p.key("conv_bwd_data", 0), make, run, err, errn);
}

inline int conv_backward_data(const ConvProblem& p, void* gy, void* w, void* gx,
                              const WeightStamp& st, char* err, size_t errn) {
    return by_batch_chunks(p, [&](const ConvProblem& q, int64_t i) {
        return conv_backward_data_whole(q, image_at(gy, p.y, p.type, i), w,
                                        image_at(gx, p.x, p.type, i), st, err, errn);
    });
}

inline int conv_backward_weights(const ConvProblem& p, void* x, void* gy, void* gw,
                                 char* err, size_t errn) {
    auto make = [&] {
        dnnl::convolution_backward_weights::primitive_desc pd(
            engine(), dnnl::algorithm::convolution_direct, p.xd(), p.wd(), p.yd(), p.stride,
            p.dilate, p.pad_l, p.pad_r, p.forward(false), user_scratchpad());
        auto e = std::make_shared<ConvBwdWeights>();
        e->prim = dnnl::convolution_backward_weights(pd);
        e->scratch = pd.scratchpad_desc();
        e->x = Move(p.ux(), pd.src_desc(), true, false);
        e->gy = Move(p.uy(), pd.diff_dst_desc(), true, false);
        e->gw = Move(p.uw(), pd.diff_weights_desc(), false, true);
        refuse_if(e->refused, {&e->x, &e->gy, &e->gw}, e->scratch);
        return e;
    };
    auto run = [&](ConvBwdWeights& e, dnnl::stream& s) {
        run_moved(e.prim, s, e.scratch, e.x, DNNL_ARG_SRC, x, e.gy, DNNL_ARG_DIFF_DST, gy,
                  e.gw, DNNL_ARG_DIFF_WEIGHTS, gw);
    };
    return cached_call(conv_bwd_weights_cache(), p.key("conv_bwd_weights", 0), make, run, err,
                       errn);
}

// ---- matrix product ----------------------------------------------------------------------
// c (B, M, N) = a (B, M, K) @ b (B, K, N), a and b given by dims and element strides (a
// transposed view is a stride swap, read without a copy), c row-major. B may be 1.
struct MatmulProblem {
    dims a, a_strides, b, b_strides, c;
    dt type;
};
struct Matmul {
    std::string refused;
    dnnl::matmul prim;
    memory::desc a, b, c, scratch;
};
inline Lru<Matmul>& matmul_cache() { static Lru<Matmul> t(MX_DNNL_CACHE); return t; }

inline int matmul(const MatmulProblem& p, void* a, void* b, void* c, char* err, size_t errn) {
    auto make = [&] {
        auto e = std::make_shared<Matmul>();
        e->a = memory::desc(p.a, p.type, p.a_strides);
        e->b = memory::desc(p.b, p.type, p.b_strides);
        e->c = plain(p.c, p.type);
        dnnl::matmul::primitive_desc pd(engine(), e->a, e->b, e->c, user_scratchpad());
        e->prim = dnnl::matmul(pd);
        e->scratch = pd.scratchpad_desc();
        Move ma(e->a, e->a, false, false), mb(e->b, e->b, false, false);
        Move mc(e->c, e->c, false, false);
        refuse_if(e->refused, {&ma, &mb, &mc}, e->scratch);
        return e;
    };
    auto run = [&](Matmul& e, dnnl::stream& s) {
        e.prim.execute(s, {{DNNL_ARG_SRC, memory(e.a, engine(), a)},
                           {DNNL_ARG_WEIGHTS, memory(e.b, engine(), b)},
                           {DNNL_ARG_DST, memory(e.c, engine(), c)},
                           {DNNL_ARG_SCRATCHPAD, scratch(e.scratch, 3)}});
    };
    std::string key = key_of("matmul", {&p.a, &p.a_strides, &p.b, &p.b_strides, &p.c},
                             {(int64_t)p.type});
    return cached_call(matmul_cache(), key, make, run, err, errn);
}

inline size_t cached_primitives() {
    return conv_fwd_cache().size() + conv_bwd_data_cache().size() +
           conv_bwd_weights_cache().size() + matmul_cache().size();
}

inline void clear_caches() {
    weight_cache().clear();
    conv_fwd_cache().clear();
    conv_bwd_data_cache().clear();
    conv_bwd_weights_cache().clear();
    matmul_cache().clear();
}

}  // namespace mxdnnl
