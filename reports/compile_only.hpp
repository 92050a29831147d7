#pragma once
/// Whether a kernel's rows come from a compile-only sweep (`ktune tune --compile-only`): every
/// config was compiled and its resources recorded, none ran on a GPU. Every report format says so
/// instead of "no config ran correctly" (Markdown and HTML in text, JSON in its "kernels" entries,
/// CSV in each row's reason "compile-only").

#include <string_view>

#include "reports/report_data.hpp"

namespace ktune::reports {

/// What the reports print for such a kernel.
inline constexpr std::string_view kCompileOnlyNote =
    "a compile-only sweep: every config was compiled and its resources recorded; nothing was measured, "
    "so there is no winner";

/// What they print for a kernel that was measured and has no winner.
inline constexpr std::string_view kNothingRanNote = "no config of this kernel ran correctly";

/// True when no row of `kernel` in `data` was measured on a GPU (outcomes skipped, compile_error and
/// exceeds_limits only) and at least one was skipped as "compile-only".
bool compile_only_kernel(const ReportData& data, std::string_view kernel);

/// Why `kernel` has no winner in `data`: kCompileOnlyNote, kNothingRanNote, or "" when some key of
/// it has a winner.
std::string_view no_winner_note(const ReportData& data, std::string_view kernel);

}  // namespace ktune::reports
