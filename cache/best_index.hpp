#pragma once
/// BestIndex: an in-memory snapshot of the best configs of one GPU, for the dispatch runtime's
/// hot path. ConfigCache::best() answers from SQLite (microseconds); a program that asks the same
/// question on every kernel launch loads a BestIndex once and looks up in a hash map keyed by
/// (kernel, shape, dtype, layout) without allocating (tens of nanoseconds; docs/perf/cache-lookup.md).
/// The snapshot does not see later writes: load it again after a sweep.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cache/config_cache.hpp"
#include "core/shape.hpp"

namespace ktune::cache {

class BestIndex {
 public:
  BestIndex() = default;

  /// Loads every best row of GPU `gpu_name` (matched exactly). For each kernel only the rows of one
  /// template hash are kept: the hash given in `source_hashes` when it names the kernel, else the
  /// kernel's most recently registered hash.
  static BestIndex load(const ConfigCache& cache, std::string_view gpu_name,
                        const std::map<std::string, std::string>& source_hashes = {});

  /// The best config tuned for exactly this key, or nullptr. Never allocates; the pointer stays
  /// valid as long as this index.
  /// `layout` is matched exactly: "" for a kernel without layouts.
  const BestConfig* find(std::string_view kernel, std::string_view shape, DType dtype,
                         std::string_view layout) const noexcept;

  /// find(), else the nearest tuned shape of the same kernel, dtype and layout (Shape::distance;
  /// ties go to the shape text that sorts first), returned with fallback = true and shape = the one
  /// asked.
  std::optional<BestConfig> find_or_nearest(std::string_view kernel, const Shape& shape, DType dtype,
                                            std::string_view layout) const;

  std::size_t size() const { return entries_.size(); }
  const std::string& gpu_name() const { return gpu_name_; }

 private:
  /// A borrowed key (the dtype as its name); the stored key is the four parts joined by kSep.
  struct KeyView {
    std::string_view kernel, shape, dtype, layout;
  };
  /// ASCII unit separator: never part of a name, shape, dtype or layout.
  static constexpr char kSep = '\x1f';
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(const KeyView& k) const noexcept;
    std::size_t operator()(const std::string& joined) const noexcept;
  };
  struct KeyEq {
    using is_transparent = void;
    bool operator()(const std::string& a, const std::string& b) const noexcept { return a == b; }
    bool operator()(const KeyView& a, const std::string& b) const noexcept;
    bool operator()(const std::string& a, const KeyView& b) const noexcept { return (*this)(b, a); }
  };

  struct Entry {
    BestConfig config;
    std::optional<Shape> shape;  ///< parsed tuned shape; absent when the stored text does not parse
  };

  std::string gpu_name_;
  std::vector<Entry> entries_;
  std::unordered_map<std::string, std::size_t, KeyHash, KeyEq> index_;
};

}  // namespace ktune::cache
