#pragma once
/// Reading a user kernel description's `[reference]` (docs/byo.md): a reference kernel of NAME.cu
/// and its launch, a config of the tuned template, or a data reference (inputs and expected
/// outputs saved per key), each with its optional per-output tolerance; or `verify = false`.

#include <filesystem>

#include <toml++/toml.h>

#include "kernel_templates/user_kernel/user_kernel_description.hpp"
#include "kernel_templates/user_kernel/user_kernel_reader_context.hpp"

namespace ktune::kernel_templates {

/// The reference of the description whose root table is `root` and whose arguments `d` has read;
/// `folder` is where the description lies (a data reference's folder is beside it). Fails, through
/// `ctx`, on `verify` other than false or beside a `[reference]`, a missing `[reference]`, an
/// unknown key, two kinds at once (`function`, `config`, `data`), a data folder that is not a plain
/// relative path or an input with a fill beside it, and a tolerance that names no output or is out
/// of range (a relative bound in (0, 1], an absolute one >= 0, an integer output abs only).
UserReference read_reference(DescriptionReaderContext& ctx, const UserKernelDescription& d,
                             const toml::table& root, const std::filesystem::path& folder);

}  // namespace ktune::kernel_templates
