#pragma once
/// Waiting for a pending cubin (UserCubin::pending): one its compiler (ktune.triton's tune) is
/// still making while `ktune tune` already measures the configs that are ready, so compilation
/// runs in parallel with measurement. The compiler lists every cubin it will make as pending in
/// NAME.cubins/index.toml before the tuner starts, and rewrites the index whole as each one is
/// done (or has failed); the waiter re-reads the index whenever it changes.

#include <chrono>

#include "kernel_templates/user_kernel/user_kernel_description.hpp"

namespace ktune::kernel_templates {

/// How long the index may stay unchanged before a waiter gives up on its compiler: longer than
/// any one Triton compile, short enough that a compiler killed mid-way does not hang a sweep.
inline constexpr std::chrono::seconds kPendingCubinIdle{300};

/// The entry of `d`'s cubin index with `pending`'s config, dtype and specialization once it is no
/// longer pending: whole, or failed (UserCubin::failed says why). The index is checked every few
/// milliseconds and read again when it changed. Throws ktune::Error(kRuntime) when the entry
/// leaves the index or the index stays unchanged for `idle`, and ktune::Error(kBadInput) when the
/// index cannot be read.
UserCubin await_pending_cubin(const UserKernelDescription& d, const UserCubin& pending,
                              std::chrono::milliseconds idle = kPendingCubinIdle);

}  // namespace ktune::kernel_templates
