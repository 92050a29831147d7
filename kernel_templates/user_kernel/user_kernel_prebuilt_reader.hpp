#pragma once
/// Reading a description's `[prebuilt]` table (docs/byo.md, "Prebuilt cubins"): the architecture
/// the cubins were built for, what built them, and one `[[prebuilt.cubin]]` per (config, dtype)
/// with its entry, threads, dynamic shared memory and appended scratch pointers.

#include <filesystem>
#include <string>

#include <toml++/toml.h>

#include "kernel_templates/user_kernel/user_kernel_description.hpp"
#include "kernel_templates/user_kernel/user_kernel_reader_context.hpp"

namespace ktune::kernel_templates {

/// `node` is the `[prebuilt]` table of description `d` (its template parameters and dtypes already
/// read); `cubins` is the folder its cubin files are in (NAME.cubins/). Fails, through `ctx`, on
/// an unknown key, a cubin of an unknown config or dtype, two cubins of one (config, dtype), a file
/// that does not exist, or a launch geometry a GPU cannot take.
UserPrebuilt read_prebuilt(DescriptionReaderContext& ctx, const UserKernelDescription& d,
                           const toml::node& node, const std::filesystem::path& cubins);

}  // namespace ktune::kernel_templates
