#pragma once
/// The user kernels this process knows: folders loaded (`--kernel-dir DIR`, the runtime's
/// `KTUNE_KERNEL_DIR`) become specs in the kernel registry beside the built-in ones, so the
/// catalog, the tuner, the cache's kernel hash, `ktune query` and the runtime treat them alike.
/// Loading happens at start-up, before the registry is read from several threads.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "kernel_templates/user_kernel/user_kernel_spec.hpp"

namespace ktune::kernel_templates {

/// Loads every kernel of `folder`: each NAME.toml beside a NAME.cu or a NAME.cubins folder. Returns their
/// names. Throws ktune::Error(kBadInput) for a folder that is not a directory, one with no kernel, a
/// description error ("FILE:LINE: field: message"), or a name that a built-in kernel already has. Loading the
/// same kernel again replaces it (an edited file).
std::vector<std::string> load_kernel_folder(const std::filesystem::path& folder);

/// Registers one user kernel (tests; load_kernel_folder uses it). Throws like load_kernel_folder.
const UserKernelSpec& register_user_kernel(UserKernelDescription description);

/// The user kernel named `name`, or null.
const UserKernelSpec* find_user_kernel(std::string_view name);

/// Every registered user kernel, in registration order.
std::vector<const UserKernelSpec*> user_kernels();

/// Changes whenever a kernel is registered or forgotten (the catalog rebuilds its table then).
uint64_t user_kernel_generation();

/// Forgets every user kernel (tests).
void clear_user_kernels();

/// Loads the folders of $KTUNE_KERNEL_DIR (':'-separated) once; a no-op when it is unset.
void load_kernel_folders_from_environment();

}  // namespace ktune::kernel_templates
