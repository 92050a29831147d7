#pragma once
/// Reading the `[[prune]]` tables of a prebuilt description's cubin index (docs/byo.md, "Prebuilt
/// cubins"): for one dtype and shape, the configs a compiler's per-key pruning keeps (a Triton
/// kernel's `prune_configs_by`).

#include <string>

#include <toml++/toml.h>

#include "kernel_templates/user_kernel/user_kernel_description.hpp"
#include "kernel_templates/user_kernel/user_kernel_reader_context.hpp"

namespace ktune::kernel_templates {

/// Appends the prunes of `node`, an array of tables named `field` in messages ("prune" in the
/// index), to `p`; `d` is the description (its dims, dtypes and template parameters read). Fails,
/// through `ctx`, on an unknown key, a dtype not in `dtypes`, a shape that does not give every dim
/// (and nothing else) a positive integer, a `keep` that is missing, empty or holds a config twice
/// or a config that is not a point of the template, and two prunes of one dtype and shape.
void read_prunes(DescriptionReaderContext& ctx, const UserKernelDescription& d, const toml::node& node,
                 const std::string& field, UserPrebuilt& p);

}  // namespace ktune::kernel_templates
