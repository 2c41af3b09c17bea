// Blocked copies of convolution weights kept across calls, so a parameter's weight is
// reordered into the layout a primitive wants once per version of the parameter, not on
// every call (mxlite.ops.onednn: ``weight_cache``, opt-in).
//
// A copy is found by its key -- the tracked array's serial (never reused in a process), the
// user buffer's address, and both layouts -- and used only while its version is the
// caller's: the Python side passes the NDArray's version, which every write through mxlite
// bumps. Copies are bounded by bytes, least recently used first out; the budget is 0 by
// default (a kept copy is a second copy of the weight: ResNet-50's 98 MB again).
#pragma once
#include <cstdint>
#include <cstdlib>
#include <list>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

#include "oneapi/dnnl/dnnl.hpp"

namespace mxdnnl {

// What the caller knows of a weight: serial 0 means not tracked (reordered per call).
struct WeightStamp {
    uint64_t serial = 0, version = 0;
};

struct WeightCopy {
    uint64_t version = 0;
    size_t bytes = 0;
    std::shared_ptr<void> data;
};

inline std::shared_ptr<WeightCopy> new_weight_copy(size_t bytes, uint64_t version) {
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) throw std::bad_alloc();
    auto c = std::make_shared<WeightCopy>();
    c->version = version;
    c->bytes = bytes;
    c->data = std::shared_ptr<void>(p, std::free);
    return c;
}

// The key of a weight's copy in `inner` layout made from `user` memory at `ptr`.
inline std::string weight_key(uint64_t serial, const void* ptr, const dnnl::memory::desc& user,
                              const dnnl::memory::desc& inner) {
    std::string k = std::to_string(serial) + '@' + std::to_string((uintptr_t)ptr);
    for (const dnnl::memory::desc* d : {&user, &inner}) {
        k += '|';
        k += std::to_string((int)d->get_data_type());
        for (auto v : d->get_dims()) k += ',' + std::to_string(v);
        k += ';';
        for (auto v : d->get_strides()) k += ',' + std::to_string(v);
        k += ';';
        auto blks = d->get_inner_blks();
        auto idxs = d->get_inner_idxs();
        for (size_t i = 0; i < blks.size(); ++i)
            k += ',' + std::to_string(blks[i]) + 'x' + std::to_string(idxs[i]);
    }
    return k;
}

class WeightCache {
   public:
    // The copy under `key` made from `version`, or null (none, or an older version).
    std::shared_ptr<WeightCopy> get(const std::string& key, uint64_t version) {
        std::lock_guard<std::mutex> g(mu_);
        auto it = map_.find(key);
        if (it == map_.end() || it->second.first->version != version) return nullptr;
        order_.splice(order_.begin(), order_, it->second.second);
        return it->second.first;
    }
    void put(const std::string& key, std::shared_ptr<WeightCopy> c) {
        std::lock_guard<std::mutex> g(mu_);
        drop_locked(key);
        if (c->bytes > budget_) return;
        order_.push_front(key);
        map_[key] = {c, order_.begin()};
        bytes_ += c->bytes;
        while (bytes_ > budget_) drop_locked(order_.back());
    }
    bool on() {
        std::lock_guard<std::mutex> g(mu_);
        return budget_ > 0;
    }
    void set_budget(size_t b) {
        std::lock_guard<std::mutex> g(mu_);
        budget_ = b;
        while (bytes_ > budget_) drop_locked(order_.back());
    }
    size_t bytes() {
        std::lock_guard<std::mutex> g(mu_);
        return bytes_;
    }
    void clear() {
        std::lock_guard<std::mutex> g(mu_);
        map_.clear();
        order_.clear();
        bytes_ = 0;
    }
    size_t size() {
        std::lock_guard<std::mutex> g(mu_);
        return map_.size();
    }

   private:
    void drop_locked(const std::string& key) {
        auto it = map_.find(key);
        if (it == map_.end()) return;
        bytes_ -= it->second.first->bytes;
        order_.erase(it->second.second);
        map_.erase(it);
    }
    std::mutex mu_;
    size_t budget_ = 0, bytes_ = 0;
    std::list<std::string> order_;
    std::unordered_map<std::string,
                       std::pair<std::shared_ptr<WeightCopy>, std::list<std::string>::iterator>>
        map_;
};

inline WeightCache& weight_cache() {
    static WeightCache c;
    return c;
}

}  // namespace mxdnnl
