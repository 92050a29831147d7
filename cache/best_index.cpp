#include "cache/best_index.hpp"

#include <cmath>
#include <limits>

#include "ktune/error.hpp"

namespace ktune::cache {
namespace {

// FNV-1a, 64 bit: streams over the four parts without joining them (no allocation per lookup).
constexpr uint64_t kFnvOffset = 14695981039346656037ULL;
constexpr uint64_t kFnvPrime = 1099511628211ULL;

uint64_t fnv(uint64_t h, std::string_view s) noexcept {
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= kFnvPrime;
  }
  return h;
}

}  // namespace

std::size_t BestIndex::KeyHash::operator()(const KeyView& k) const noexcept {
  const char sep[1] = {kSep};
  uint64_t h = fnv(kFnvOffset, k.kernel);
  h = fnv(h, {sep, 1});
  h = fnv(h, k.shape);
  h = fnv(h, {sep, 1});
  h = fnv(h, k.dtype);
  h = fnv(h, {sep, 1});
  return static_cast<std::size_t>(fnv(h, k.layout));
}

std::size_t BestIndex::KeyHash::operator()(const std::string& joined) const noexcept {
  return static_cast<std::size_t>(fnv(kFnvOffset, joined));
}

bool BestIndex::KeyEq::operator()(const KeyView& a, const std::string& b) const noexcept {
  const std::string_view j = b;
  const std::size_t n = a.kernel.size() + a.shape.size() + a.dtype.size() + a.layout.size() + 3;
  if (j.size() != n) return false;
  const std::size_t s1 = a.kernel.size();
  const std::size_t s2 = s1 + 1 + a.shape.size();
  const std::size_t s3 = s2 + 1 + a.dtype.size();
  return j.substr(0, s1) == a.kernel && j[s1] == kSep && j.substr(s1 + 1, a.shape.size()) == a.shape &&
         j[s2] == kSep && j.substr(s2 + 1, a.dtype.size()) == a.dtype && j[s3] == kSep &&
         j.substr(s3 + 1) == a.layout;
}

BestIndex BestIndex::load(const ConfigCache& cache, std::string_view gpu_name,
                          const std::map<std::string, std::string>& source_hashes) {
  BestIndex idx;
  idx.gpu_name_ = std::string(gpu_name);
  Filter filter;
  filter.gpu_name = idx.gpu_name_;
  std::map<std::string, std::optional<std::string>, std::less<>> wanted_hash;
  for (BestConfig& b : cache.list_best(filter)) {
    auto it = wanted_hash.find(b.kernel.name);
    if (it == wanted_hash.end()) {
      const auto given = source_hashes.find(b.kernel.name);
      std::optional<std::string> hash = given != source_hashes.end()
                                            ? std::optional(given->second)
                                            : cache.current_source_hash(b.kernel.name);
      it = wanted_hash.emplace(b.kernel.name, std::move(hash)).first;
    }
    if (it->second != b.kernel.source_hash) continue;
    std::string key = b.kernel.name + kSep + b.shape + kSep + to_string(b.dtype) + kSep + b.layout;
    const auto existing = idx.index_.find(key);
    if (existing != idx.index_.end()) {
      // Two GPU rows of one name (e.g. memory sizes differ): keep the faster answer.
      if (idx.entries_[existing->second].config.stats.median_us <= b.stats.median_us) continue;
      idx.entries_[existing->second].config = std::move(b);
      continue;
    }
    std::optional<Shape> shape;
    try {
      shape = Shape::parse(b.shape);
    } catch (const Error&) {
      // kept for exact lookups; it just cannot serve as a fallback
    }
    idx.index_.emplace(std::move(key), idx.entries_.size());
    idx.entries_.push_back(Entry{std::move(b), std::move(shape)});
  }
  return idx;
}

const BestConfig* BestIndex::find(std::string_view kernel, std::string_view shape, DType dtype,
                                  std::string_view layout) const noexcept {
  const auto it = index_.find(KeyView{kernel, shape, to_string(dtype), layout});
  return it == index_.end() ? nullptr : &entries_[it->second].config;
}

std::optional<BestConfig> BestIndex::find_or_nearest(std::string_view kernel, const Shape& shape, DType dtype,
                                                     std::string_view layout) const {
  const std::string canonical = shape.canonical();
  if (const BestConfig* exact = find(kernel, canonical, dtype, layout)) return *exact;
  const Entry* chosen = nullptr;
  double chosen_distance = std::numeric_limits<double>::infinity();
  for (const Entry& e : entries_) {
    if (!e.shape || e.config.kernel.name != kernel || e.config.dtype != dtype || e.config.layout != layout)
      continue;
    const double d = shape.distance(*e.shape);
    if (!std::isfinite(d)) continue;
    if (chosen == nullptr || d < chosen_distance ||
        (d == chosen_distance && e.config.tuned_shape < chosen->config.tuned_shape)) {
      chosen = &e;
      chosen_distance = d;
    }
  }
  if (chosen == nullptr) return std::nullopt;
  BestConfig out = chosen->config;
  out.shape = canonical;
  out.fallback = true;
  return out;
}

}  // namespace ktune::cache
