#pragma once
/// Reading the `fill` of a user kernel's input argument (docs/byo.md) for the description reader
/// (user_kernel_reader.cpp), which supplies its failure reporting and expression checks.

#include <string>

#include <toml++/toml.h>

#include "kernel_templates/user_kernel/user_kernel_description.hpp"
#include "kernel_templates/user_kernel/user_kernel_reader_context.hpp"

namespace ktune::kernel_templates {

/// `fill = { min = A, max = B }`, `{ pattern = [...] }` or `{ sequence = { start, step, modulo } }`
/// of argument `a`; a fill written with numbers only is checked here (zeros only, a value the type
/// cannot hold), one with expressions for each shape (UserKernelSpec::rejection).
UserFill read_user_fill(DescriptionReaderContext& ctx, const toml::node& node, const UserArg& a,
                        const std::string& field);

}  // namespace ktune::kernel_templates
