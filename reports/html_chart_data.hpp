#pragma once
/// The data behind the HTML report's charts, one entry per kernel: speed-up by shape, achieved
/// throughput against the ceilings (roofline), a heat map of time over two config parameters,
/// the spread of candidate times and the outcome counts. Sizes are capped (documented at each
/// constant) so that a page over 100,000 measurements stays small and quick to draw.

#include <nlohmann/json.hpp>

#include "reports/report_data.hpp"

namespace ktune::reports {

/// {"kernels":[{"name":..,"speedup":{..},"roofline":{..},"heatmap":{..}|null,"spread":{..},
///  "outcomes":{..}}, ...]} in the order of data.kernels. The page script (html_assets.cpp)
/// reads exactly these fields.
nlohmann::json html_chart_data(const ReportData& data);

}  // namespace ktune::reports
