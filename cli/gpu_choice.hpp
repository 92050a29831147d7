#pragma once
/// Which GPU model a read-only command asks the database about.

#include <string>

#include "cache/config_cache.hpp"

namespace ktune::cli {

/// `gpu` when given; else, with `device` >= 0, that device's name (needs the driver: throws
/// ktune::Error(kNoDevice) without); else device 0 of this machine when there is one; else the
/// database's only GPU. Throws ktune::Error(kBadInput) when none of these decides (no device
/// and several GPUs in the database), listing the database's GPUs.
std::string choose_gpu(const cache::ConfigCache& db, const std::string& gpu, int device);

}  // namespace ktune::cli
