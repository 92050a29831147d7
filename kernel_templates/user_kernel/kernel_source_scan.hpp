#pragma once
/// Finds the `template <...> __global__ ... NAME(` declarations of a CUDA source and counts their
/// template parameters, so that a description whose parameter list does not match its kernel is
/// refused with both places named before NVRTC sees a name expression it cannot instantiate. A
/// scan, not a parser: comments are skipped, angle brackets and parentheses are balanced.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ktune::kernel_templates {

/// One `__global__` function template found in a source.
struct KernelTemplateDecl {
  int template_params = 0;  ///< parameters between `template <` and `>`
  uint32_t line = 0;        ///< 1-based line of `template`
};

/// The first `template <...> __global__ ... function(` of `source`, or nullopt when there is none.
std::optional<KernelTemplateDecl> find_kernel_template(std::string_view source, std::string_view function);

}  // namespace ktune::kernel_templates
