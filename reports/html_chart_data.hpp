#pragma once
/// The data behind the HTML report's charts, one entry per kernel: speed-up by shape, achieved
/// throughput against the ceilings (roofline), a heat map of time over two config parameters,
/// the spread of candidate times and the outcome counts. Sizes are capped (documented at each
/// constant) so that a page over 100,000 measurements stays small and quick to draw.

#include <nlohmann/json.hpp>

#include "reports/report_data.hpp"

namespace ktune::reports {

/// {"kernels":[{"name":..,"speedup":{..}|null,"roofline":{..}|null,"heatmap":{..}|null,
///  "spread":{..}|null,"outcomes":{..}|null}, ...]} in the order of data.kernels. A chart with
/// nothing to draw is null (no baseline, no stored work, fewer than two varying parameters, no
/// timed candidate): the page leaves its panel out. The page script (assets/report.js) reads
/// exactly these fields. The roofline's points are [x, y, shape] with `shape` an index into its
/// "shapes" (one label a key); "winner_labels" and "baseline_labels" name each winner's config
/// and each baseline; "ceilings" has one entry a (GPU, dtype) with a ceiling the chart can draw.
nlohmann::json html_chart_data(const ReportData& data);

}  // namespace ktune::reports
