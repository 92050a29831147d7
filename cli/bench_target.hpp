#pragma once
/// What `ktune bench` times, resolved from its flags before any GPU is touched, so that a bad
/// kernel, shape, dtype, layout or config is reported (exit 2) ahead of a missing GPU (exit 3).
///
/// A config is given as JSON in one of three forms:
///   {"template":"mma","params":{"BLOCK_M":128,...}}   the tuner's and the cache's form
///   {"template":"mma","BLOCK_M":128,...}              flat
///   {"BLOCK_M":128,...}                               flat, for a kernel with one template
/// Parameters left out take the template's default value for the problem; an unknown parameter,
/// a non-integer value or a config the template rejects for the problem is an error naming it.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kernel_templates/kernel_catalog.hpp"
#include "kernel_templates/kernel_spec.hpp"

namespace ktune::cli {

/// One benchmark problem: the kernel, its canonical shape and the template problem.
struct BenchTarget {
  const kernel_templates::KernelDescriptor* kernel = nullptr;
  std::string shape;                  ///< canonical, e.g. m=128,n=256,k=512
  kernel_templates::Problem problem;  ///< dims in canonical order, dtype, layout
};

/// Validates kernel (catalog), shape (its dims), dtype and layout ("" = the kernel's default).
/// Throws ktune::Error(kBadInput) naming the bad part; for a catalog kernel with no templates
/// (other than the built-in copy), says so.
BenchTarget parse_bench_target(std::string_view kernel, std::string_view shape, std::string_view dtype,
                               std::string_view layout);

/// A config of one template, checked against the problem.
struct BenchConfig {
  const kernel_templates::KernelSpec* spec = nullptr;
  ktune::Config config;
  std::string name;  ///< the canonical config name
};

/// Parses `text` (one of the forms above) for `target`. Throws ktune::Error(kBadInput) naming the
/// bad part: not JSON, an unknown template, an unknown parameter, a rejected config.
BenchConfig parse_bench_config(const BenchTarget& target, std::string_view text);

/// Throws ktune::Error(kBadInput) "<config> cannot run on <device> (<arch>): <why>" when the
/// config's template cannot run on `arch` (KernelSpec::arch_rejection: wgmma off sm_90, fp8_gemm
/// before sm_89).
void require_bench_arch(const BenchConfig& config, std::string_view arch, std::string_view device);

/// `config` (already in the tuner's form, e.g. a cached winner) checked against the problem.
/// Throws ktune::Error(kBadInput) naming the template or the rejection.
BenchConfig check_bench_config(const BenchTarget& target, const ktune::Config& config);

/// The kernel's default config: the first template of the family whose default config serves the
/// problem (for gemm: the tiled template, which serves every shape). Throws ktune::Error(kBadInput)
/// when none does.
BenchConfig default_bench_config(const BenchTarget& target);

}  // namespace ktune::cli
