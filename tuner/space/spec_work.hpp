#pragma once
/// The work (FLOPs, minimum DRAM bytes) of a problem as the cache stores it with each measurement,
/// taken from the kernel's spec (KernelSpec::work): built-in families and user kernels alike. The
/// tuner stores it with every row it records; ConfigCache::open takes spec_work_model() to fill rows
/// written before the cache stored work (schema 4) and rows imported from older exports.

#include <string_view>

#include "cache/config_cache.hpp"
#include "kernel_templates/kernel_spec.hpp"

namespace ktune::tuner {

/// The work of `problem` of kernel family `kernel`, from the first of the family's specs that
/// serves the problem's dtype and layout (a family's templates agree on it: work does not depend
/// on the config). A field the spec leaves 0 is absent; both are absent for a kernel without a spec
/// (e.g. "copy") or a problem the spec cannot read (a missing dimension).
cache::Work spec_work(std::string_view kernel, const kernel_templates::Problem& problem);

/// spec_work over a stored key: the shape text parsed, the dtype named. Never throws; an unknown
/// kernel, dtype or shape gives empty work.
cache::WorkModel spec_work_model();

}  // namespace ktune::tuner
