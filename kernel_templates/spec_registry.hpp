#pragma once
/// Every KernelSpec ktune ships, by kernel (family) and variant, and the user kernels loaded from
/// kernel folders (user_kernel/user_kernels.hpp), each a family of one template. The tuner enumerates a
/// family's variants; dispatch finds the spec of a stored config through its "variant". The registered specs
/// are the one description of a kernel: the catalog (kernel_catalog.hpp), the config spaces and the
/// runtime's bindings take its dimensions, dtypes, layouts, parameters and names from them, and each
/// family's dispatch binding (dispatch_binding.hpp) from its spec.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernel_templates/dispatch_binding.hpp"
#include "kernel_templates/kernel_spec.hpp"

namespace ktune::kernel_templates {

/// What belongs to a kernel family rather than to one of its templates.
struct FamilyInfo {
  std::string_view name;            ///< e.g. "gemm"; every spec of the family has it as kernel()
  std::string_view summary;         ///< one line for `--help` and error messages
  std::string_view default_layout;  ///< the layout a request without one means ("" for none)
  /// The family's GPU reference kernels (embedded sources besides its templates' own), part of
  /// its template source hash.
  std::span<const std::string_view> references = {};
  /// How ktune::Runtime's entry point of the family binds to its templates (the family's spec
  /// declares it).
  DispatchBinding dispatch = {};
};

/// Every family with templates, in the catalog's order.
std::span<const FamilyInfo> template_families();

/// The family named `kernel`, or null when there is none (a user kernel, "copy").
const FamilyInfo* find_family(std::string_view kernel);

/// The specs of kernel `kernel` (e.g. "gemm": tiled, gemv); empty for a kernel without templates.
std::vector<const KernelSpec*> specs_of(std::string_view kernel);

/// The spec of (kernel, variant). Throws ktune::Error(kBadInput) naming the known variants.
const KernelSpec& find_spec(std::string_view kernel, std::string_view variant);

/// The embedded source files a kernel's templates use (its .cu files, the references included), for
/// SourceLibrary::hash: the kernel's template source hash. A user kernel's: NAME.cu and NAME.toml.
std::vector<std::string> kernel_source_files(std::string_view kernel);

/// The kernel's template source hash over the built-in sources (SourceLibrary::builtin().hash of
/// kernel_source_files), the `kernels.source_hash` of the cache; "" for a kernel without templates.
/// A user kernel's is over SourceLibrary::from_environment(), which holds its files.
std::string template_source_hash(std::string_view kernel);

}  // namespace ktune::kernel_templates
