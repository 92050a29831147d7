#pragma once
/// The `--layout` option of `ktune tune` and `ktune query`: the layout (or, for the operators, the
/// mode) is part of the cache key, and which values a kernel accepts is the kernel catalog's
/// business (kernel_templates/kernel_catalog.hpp: `default_layout`, `layouts`).

#include <optional>
#include <string>

#include "kernel_templates/kernel_catalog.hpp"

namespace ktune::cli {

/// The layout a request for `kernel` means: `asked` when given, else the kernel's default layout.
/// A value the kernel does not accept throws ktune::Error(kBadInput) (exit 2) naming the kernel
/// and listing its accepted values.
std::string resolve_layout(const kernel_templates::KernelDescriptor& kernel,
                           const std::optional<std::string>& asked);

/// Help text: one line a kernel, "  gemm: nt (default), nn, ...", `""` standing for the empty
/// layout; each line ends in a newline.
std::string layouts_help();

}  // namespace ktune::cli
