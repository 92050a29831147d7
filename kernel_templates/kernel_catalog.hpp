#pragma once
/// The kernel catalog: every kernel ktune knows, with its problem dimensions in canonical order
/// (the order of a shape's canonical text, part of the cache key) and the dtypes it supports.
/// The command line, the C ABI and the tuner validate a (kernel, shape, dtype, layout) request here
/// before they touch the database. Each entry is derived from the family's registered templates
/// (spec_registry.hpp); only the bandwidth ceiling "copy", which is measured rather than tuned, is
/// written here.

#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ktune/dtype.hpp"

namespace ktune::kernel_templates {

/// One known kernel.
struct KernelDescriptor {
  std::string name;               ///< e.g. "gemm"
  std::vector<std::string> dims;  ///< dimension names in canonical order, e.g. {"m","n","k"}
  std::vector<DType> dtypes;      ///< supported dtypes, e.g. {kF32, kF16, kBF16}
  std::string summary;            ///< one line for `--help` and error messages
  /// The layout (or mode) a request without one means; part of the cache key. "" for a kernel
  /// without layouts.
  std::string default_layout;
  /// Every layout the kernel accepts, `default_layout` first.
  std::vector<std::string> layouts;

  /// Whether `dtype` is one of `dtypes`.
  bool supports(DType dtype) const;
  /// The dtype named `text` (a request's text: a flag, a query parameter, the C ABI's argument)
  /// when this kernel supports it. Throws ktune::Error(kBadInput) naming the value and the
  /// supported ones otherwise, an unknown name included.
  DType parse_dtype(std::string_view text) const;
  /// Throws ktune::Error(kBadInput) naming the dtype and the supported ones when unsupported.
  void require_dtype(DType dtype) const;
  /// Whether `layout` is one of `layouts`.
  bool supports_layout(std::string_view layout) const;
  /// Throws ktune::Error(kBadInput) naming the layout and the accepted ones when not accepted.
  void require_layout(std::string_view layout) const;
  /// An example shape text with these dimensions, e.g. "m=16,n=4096,k=4096", for help text.
  std::string example_shape() const;
};

/// Every known kernel, in a fixed order.
std::span<const KernelDescriptor> kernel_catalog();

/// The kernel named `name`. Never returns null: an unknown name throws ktune::Error(kBadInput)
/// whose message lists the known kernels.
const KernelDescriptor* find_kernel(std::string_view name);

/// The entry a lookup (the C ABI, `ktune query`, `ktune serve`) checks its key against: the
/// catalog's, else, when `stored(name)` says the database holds results of a kernel so named, one
/// made from the key in `scratch`. That is a user kernel this process has not loaded (a Triton
/// kernel that ktune.triton described, a folder tuned on another host): its dimensions are the
/// shape's names in the order written, its one dtype the key's and it has no layout, so the
/// database alone says whether it holds the key. Throws find_kernel's error for a kernel neither
/// knows, and Shape::parse's for a malformed shape of a stored kernel.
const KernelDescriptor* lookup_kernel(std::string_view name, std::string_view shape, std::string_view dtype,
                                      const std::function<bool(std::string_view)>& stored,
                                      KernelDescriptor& scratch);

/// Whether `name` is a known kernel (does not throw).
bool is_known_kernel(std::string_view name);

/// "gemm, rmsnorm, ..." — the known names, for help text and error messages.
std::string known_kernel_names();

/// The current template source hash of each catalog kernel whose templates are built in (kernel
/// name -> template_source_hash); kernels without templates are absent. `ktune cache prune`
/// removes rows whose hash differs. Defined in template_hashes.cpp, so that code that only
/// needs the catalog (the C ABI) does not link the embedded templates.
std::map<std::string, std::string> current_template_hashes();

}  // namespace ktune::kernel_templates
