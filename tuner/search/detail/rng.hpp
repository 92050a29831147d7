#pragma once
/// A small seeded random generator whose sequence is fixed by this file alone (SplitMix64), so a
/// seeded search proposes the same configs on every machine and standard library. The standard
/// distributions (`std::uniform_int_distribution`, `std::shuffle`) are implementation-defined and
/// are therefore not used by the strategies.

#include <cstdint>
#include <utility>
#include <vector>

namespace ktune::tuner::detail {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  /// Next 64 random bits (SplitMix64, Steele et al. 2014).
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

  /// Uniform integer in [0, n) without modulo bias (rejection of the short last interval); n > 0.
  uint64_t below(uint64_t n) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x = next();
    while (x >= limit) x = next();
    return x % n;
  }

  /// Uniform double in [0, 1) from the top 53 bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  /// Fisher-Yates shuffle in place.
  template <typename T>
  void shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(i)]);
  }

 private:
  uint64_t state_;
};

}  // namespace ktune::tuner::detail
