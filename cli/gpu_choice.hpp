#pragma once
/// Which GPU model a read-only command asks the database about.

#include <string>
#include <vector>

#include "cache/config_cache.hpp"

namespace ktune::cli {

/// The database's GPU that `name` names: `name` itself when the database holds it, else the one GPU
/// whose name contains it, ignoring case ("H200" -> "NVIDIA H200"). A database that holds no GPU
/// yet gives `name` back. Throws ktune::Error(kBadInput) listing the database's GPUs when none or
/// several contain it.
std::string match_gpu_name(const cache::ConfigCache& db, const std::string& name);

/// The names as a list for a message: "a", "b", "c".
std::string quoted_list(const std::vector<std::string>& names);

/// match_gpu_name(gpu) when given; else, with `device` >= 0, that device's name (needs the driver: throws
/// ktune::Error(kNoDevice) without); else device 0 of this machine when there is one; else the
/// database's only GPU. Throws ktune::Error(kBadInput) when none of these decides (no device
/// and several GPUs in the database), listing the database's GPUs.
std::string choose_gpu(const cache::ConfigCache& db, const std::string& gpu, int device);

}  // namespace ktune::cli
