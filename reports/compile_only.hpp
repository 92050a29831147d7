#pragma once
/// Whether a kernel's rows come from a compile-only sweep (`ktune tune --compile-only`): every
/// config was compiled and its resources recorded, none ran on a GPU. The Markdown and HTML reports
/// say so instead of "no config ran correctly".

#include <string_view>

#include "reports/report_data.hpp"

namespace ktune::reports {

/// What the reports print for such a kernel.
inline constexpr std::string_view kCompileOnlyNote =
    "a compile-only sweep: every config was compiled and its resources recorded; nothing was measured, "
    "so there is no winner";

/// True when no row of `kernel` in `data` was measured on a GPU (outcomes skipped, compile_error and
/// exceeds_limits only) and at least one was skipped as "compile-only".
bool compile_only_kernel(const ReportData& data, std::string_view kernel);

}  // namespace ktune::reports
