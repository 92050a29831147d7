#pragma once
/// `json_integer<T>(j, what)`: a JSON value read as an integer of type T, or ktune::Error(kBadInput)
/// naming the field. nlohmann's get<int>() casts a float such as 1e300 or a negative number into
/// an unsigned type with undefined behaviour (found by the export and worker-protocol fuzz targets);
/// every reader of untrusted JSON integers goes through this instead.

#include <limits>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ktune/error.hpp"

namespace ktune {

template <typename T, typename Json>
T json_integer(const Json& j, std::string_view what) {
  if (j.is_number_unsigned() && std::in_range<T>(j.template get<uint64_t>()))
    return static_cast<T>(j.template get<uint64_t>());
  if (j.is_number_integer() && !j.is_number_unsigned() && std::in_range<T>(j.template get<int64_t>()))
    return static_cast<T>(j.template get<int64_t>());
  throw Error(ErrorKind::kBadInput,
              fmt::format("\"{}\" must be an integer in [{}, {}], not {}", what,
                          std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), j.dump()));
}

}  // namespace ktune
