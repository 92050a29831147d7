#pragma once
/// The body of `POST /v1/jobs`: what to tune, checked before the job is queued. Names of presets and
/// shape sets are names (configs/presets, configs/shapes), never paths: nothing from a request
/// reaches a file path.
///
///   {"kernel": "gemm" | ["gemm", ...], "preset": "quick", "shapes": ["m=16,n=4096,k=4096", ...],
///    "shape_set": "llama3-8b", "dtype": "bf16" | ["bf16", ...], "layout": "nt",
///    "strategy": "<a name of tuner::strategies()>", "budget": 50, "seed": 1,
///    "compile_only": true, "arch": "sm_90", "device": 0}

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/loop/tuning_session.hpp"

namespace ktune::service {

struct JobRequest {
  tuner::SessionRequest session;
  bool compile_only = false;
  std::string arch;  ///< compile-only target, e.g. "sm_90"
  int device = -1;   ///< measuring jobs: the GPU ordinal (-1: the server's first)

  /// The lane that runs it: "compile:sm_90" or "device:0".
  std::string lane() const;
};

/// Parses and checks a request body (400 naming the bad field). `devices`: the ordinals this server
/// measures on (empty: none; then only compile-only jobs are accepted, 503 otherwise).
JobRequest parse_job_request(const nlohmann::json& body, const std::vector<int>& devices);

}  // namespace ktune::service
