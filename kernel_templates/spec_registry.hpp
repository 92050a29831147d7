#pragma once
/// Every KernelSpec ktune ships, by kernel (family) and variant. The tuner enumerates a family's
/// variants; dispatch finds the spec of a stored config through its "variant".

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernel_templates/kernel_spec.hpp"

namespace ktune::kernel_templates {

/// The specs of kernel `kernel` (e.g. "gemm": tiled, gemv); empty for a kernel without templates.
std::vector<const KernelSpec*> specs_of(std::string_view kernel);

/// The spec of (kernel, variant). Throws ktune::Error(kBadInput) naming the known variants.
const KernelSpec& find_spec(std::string_view kernel, std::string_view variant);

/// The embedded source files a kernel's templates use (its .cu files, the references included), for
/// SourceLibrary::hash: the kernel's template source hash.
std::vector<std::string> kernel_source_files(std::string_view kernel);

/// The kernel's template source hash over the built-in sources (SourceLibrary::builtin().hash of
/// kernel_source_files), the `kernels.source_hash` of the cache; "" for a kernel without templates.
std::string template_source_hash(std::string_view kernel);

}  // namespace ktune::kernel_templates
