#pragma once
/// DispatchBinding: how the dispatch runtime's entry point of a kernel family (ktune::Runtime::rmsnorm,
/// ...) binds to the family's templates, declared once by the family's spec and registered with the
/// family (FamilyInfo::dispatch, spec_registry.hpp). It is plain data, names and kinds: the runtime
/// (runtime/detail/op_binding.cpp) turns it into the bindings its launch path uses.
///
/// The spec's plans pass their own constants where a caller gives a value at each call (eps, a
/// scale, the rope table's max_pos, a KV cache's geometry); a CallScalar says which. It is found
/// either by name, at the position of the parameter so named in the family's `signature` (the
/// kernel's parameters in order, as its .cu source declares them: a test checks the two agree), or
/// by value, as every argument that holds the spec's constant in any launch (for one the spec
/// passes to several launches at different positions). A name the signature lacks is refused when
/// the runtime derives the binding, so a reordered kernel signature moves the scalar with it
/// instead of leaving a stale position behind.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string_view>

namespace ktune::kernel_templates {

/// One scalar an entry point takes at each call, in the entry point's order (its index there).
struct CallScalar {
  enum class Kind : uint8_t { kF32, kI32 };
  /// spec_value of a scalar found by name whose argument may hold any value of its kind (a
  /// geometry the tuned plan derives from the shape); the kind is still checked.
  static constexpr double kAnyValue = std::numeric_limits<double>::quiet_NaN();

  std::string_view name = {};  ///< the kernel parameter the caller's value replaces, e.g. "max_pos"
  Kind kind = Kind::kF32;
  double spec_value = 0;  ///< what the spec's plans pass there
  bool by_value = false;  ///< found by `spec_value` in every launch rather than by name
};

/// How an entry point binds to its family's templates.
struct DispatchBinding {
  /// The template whose default config serves every problem of the family.
  std::string_view default_variant = {};
  /// Templates whose default config is tried first, in order, where it serves the problem on the
  /// device (a miss's default should not be the slowest template that is correct).
  std::span<const std::string_view> preferred_defaults = {};
  /// The entry point's tensors in its pointer order (the plans' tensor names).
  std::span<const std::string_view> slots = {};
  /// The parameters, in order, of the kernel every template launches with the call-time scalars
  /// found by name; empty where there are none.
  std::span<const std::string_view> signature = {};
  /// The call-time scalars, in the entry point's order.
  std::span<const CallScalar> scalars = {};
  /// Tensors whose row strides the entry point takes at each call: call-time scalars after
  /// `scalars`, in this order.
  std::span<const std::string_view> row_strides = {};
};

/// Position of parameter `name` in `signature`; nullopt when it is absent or not alone there.
constexpr std::optional<std::size_t> signature_index(std::span<const std::string_view> signature,
                                                     std::string_view name) {
  std::optional<std::size_t> found;
  for (std::size_t i = 0; i < signature.size(); ++i) {
    if (signature[i] != name) continue;
    if (found) return std::nullopt;
    found = i;
  }
  return found;
}

}  // namespace ktune::kernel_templates
