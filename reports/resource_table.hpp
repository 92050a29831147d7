#pragma once
/// What each compiled config of a kernel uses and allows: registers a thread, shared memory a block
/// (static + dynamic), spilled bytes, threads a block, and the blocks an SM can hold with them (the
/// occupancy limit, and which resource sets it). It is the whole result of a compile-only sweep
/// (`ktune tune --compile-only`, the quickstart on a machine without a GPU): Markdown and HTML show
/// it as a table for such kernels, CSV and JSON carry its values in every row.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reports/report_data.hpp"

namespace ktune::reports {

/// The per-SM limits of one compute capability (CUDA's occupancy rules).
struct SmLimits {
  int64_t registers = 65536;       ///< 32-bit registers an SM
  int64_t shared_bytes = 233472;   ///< shared memory an SM (sm_90: 228 KiB)
  int64_t reserved_shared = 1024;  ///< shared memory the system reserves for each block
  int64_t threads = 2048;          ///< resident threads an SM
  int64_t blocks = 32;             ///< resident blocks an SM
};

/// The limits of "sm_90", "sm_89", "sm_80" ... (those of sm_90 for an arch this table lacks).
SmLimits sm_limits(std::string_view arch);

struct CompiledResources {
  int64_t registers = 0;     ///< a thread
  int64_t shared_bytes = 0;  ///< a block, static + dynamic
  int64_t spill_bytes = 0;   ///< spill stores + loads
  int64_t threads_per_block = 0;
  std::string arch;                      ///< what it was compiled for, e.g. "sm_90"
  std::optional<int64_t> blocks_per_sm;  ///< the occupancy limit; empty without threads or registers
  std::string limited_by;                ///< "registers", "shared memory", "threads" or "blocks"
};

/// A row's compiled resources, from its stored resources (the worker's figures where they were
/// measured, the compiler's otherwise); empty when it records no registers (not compiled, a library
/// call).
std::optional<CompiledResources> compiled_resources(const ReportRow& row);

/// The listed rows of `kernel` that record compiled resources, in row order: (row index, resources).
std::vector<std::pair<size_t, CompiledResources>> kernel_resources(const ReportData& data,
                                                                   std::string_view kernel);

/// "512 B", "48.0 KiB": a size of shared memory or spills as a table cell.
std::string bytes_text(int64_t bytes);

/// "8 (registers)": the occupancy limit as a table cell; "–" without one.
std::string occupancy_text(const CompiledResources& r);

/// blocks_per_sm and limited_by for `r` under `limits`.
void set_occupancy(CompiledResources& r, const SmLimits& limits);

}  // namespace ktune::reports
