#pragma once
/// `ktune devices --calibrate`: measures a device's ceilings (copy bandwidth through the worker,
/// cuBLASLt bf16/f16 GEMM rates; measure/ceilings.hpp) and stores them with the GPU in the
/// ConfigCache (GpuInfo::ceilings_json), for rooflines and "% of ceiling" columns.

#include <string>

#include <nlohmann/json.hpp>

namespace ktune::cli {

/// Measures device `ordinal`'s ceilings, upserts the GPU with them into the database named by
/// `db_flag` ("" = default path), and returns the ceilings JSON (plus "db": the path written).
/// Progress goes to stderr. Throws ktune::Error(kNoDevice) without a usable GPU.
nlohmann::json calibrate_device(int ordinal, const std::string& db_flag);

}  // namespace ktune::cli
