#pragma once
/// Finds the `template <...> __global__ ... NAME(` declarations of a CUDA source and counts their
/// template parameters, so that a description whose parameter list does not match its kernel is
/// refused with both places named before NVRTC sees a name expression it cannot instantiate, and
/// names the function's parameters (a spec's signature is checked against them). A scan, not a
/// parser: comments are skipped, angle brackets and parentheses are balanced.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ktune::kernel_templates {

/// One `__global__` function template found in a source.
struct KernelTemplateDecl {
  int template_params = 0;  ///< parameters between `template <` and `>`
  uint32_t line = 0;        ///< 1-based line of `template`
  /// The function's parameter names in order, "" for an unnamed one (`int`, `const T* __restrict__`):
  /// a parameter's name is its last identifier when another one, not a qualifier (const, volatile,
  /// __restrict__, __grid_constant__, signed, unsigned, short, long), precedes it.
  std::vector<std::string> params;
};

/// The first `template <...> __global__ ... function(` of `source`, or nullopt when there is none.
std::optional<KernelTemplateDecl> find_kernel_template(std::string_view source, std::string_view function);

}  // namespace ktune::kernel_templates
