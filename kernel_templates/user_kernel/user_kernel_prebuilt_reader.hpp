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
/// read); `cubins` is the folder its cubin files are in (NAME.cubins/). Reads the inline
/// `[[prebuilt.cubin]]` list when there is one (the result's `cubins` is empty otherwise: they are
/// in the folder's index). Fails, through `ctx`, on an unknown key or an architecture that is not
/// sm_XY, and as read_cubins does.
UserPrebuilt read_prebuilt(DescriptionReaderContext& ctx, const UserKernelDescription& d,
                           const toml::node& node, const std::filesystem::path& cubins);

/// Appends the cubins of `node`, an array of tables named `field` in messages ("prebuilt.cubin" in
/// NAME.toml, "cubin" in the index), to `p`. Fails, through `ctx`, on an unknown key, a cubin of an
/// unknown config or dtype, two cubins of one (config, dtype, specialization), a file that does not
/// exist, or a launch geometry a GPU cannot take.
void read_cubins(DescriptionReaderContext& ctx, const UserKernelDescription& d, const toml::node& node,
                 const std::string& field, const std::filesystem::path& cubins, UserPrebuilt& p);

/// The `dtype` of table `t` (a cubin's or a prune's, named `field` in messages): one of the
/// description's dtypes. Fails, through `ctx`, when missing, not a string, unknown or not served.
DType dtype_in(DescriptionReaderContext& ctx, const UserKernelDescription& d, const toml::table& t,
               const std::string& field);

/// NAME.cubins/index.toml: the cubin list of a description whose `[prebuilt]` lists none, and its
/// per-key prunes (user_kernel_prune_reader.hpp). It is not part of the kernel's hash (`producer`
/// is), so a compiler may add cubins to it as they are needed.
std::filesystem::path cubin_index(const std::filesystem::path& cubins);

}  // namespace ktune::kernel_templates
