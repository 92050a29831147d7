#pragma once
/// A problem shape: named positive dimensions, e.g. `m=16,n=4096,k=4096`. The canonical text
/// form lists the dimensions in the kernel's declared order; it is part of the cache key.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ktune {

class Shape {
 public:
  /// Parses `name=value[,name=value...]`. Names are lower-case identifiers, values integers in
  /// [1, 2^31-1]. Throws ktune::Error(kBadInput) naming the bad part (`m=-1`, `m=abc`, a value
  /// past 2^31-1, a repeated name, empty text).
  static Shape parse(std::string_view text);

  /// The same shape checked against a kernel's dimension names and reordered to them.
  /// Throws ktune::Error(kBadInput) naming a missing or an unknown dimension.
  Shape normalized(std::span<const std::string> dims) const;

  /// `m=16,n=4096,k=4096` in this shape's order.
  std::string canonical() const;

  /// Value of a dimension; throws ktune::Error(kBadInput) when absent.
  int64_t at(std::string_view name) const;
  const std::vector<std::pair<std::string, int64_t>>& dims() const { return dims_; }

  /// Distance used for the nearest-tuned-shape fallback: sum over dimensions of
  /// |log2(a/b)|; infinity when the two shapes do not have the same dimension names.
  double distance(const Shape& other) const;

  bool operator==(const Shape&) const = default;

 private:
  std::vector<std::pair<std::string, int64_t>> dims_;
};

}  // namespace ktune
