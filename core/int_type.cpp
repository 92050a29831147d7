#include "core/int_type.hpp"

#include <cstdint>
#include <limits>

namespace ktune {

std::string_view to_string(IntType type) {
  switch (type) {
    case IntType::kI32:
      return "i32";
    case IntType::kI64:
      return "i64";
    case IntType::kU8:
      return "u8";
  }
  return "?";
}

std::optional<IntType> int_type_from_string(std::string_view name) {
  for (IntType t : {IntType::kI32, IntType::kI64, IntType::kU8}) {
    if (name == to_string(t)) return t;
  }
  return std::nullopt;
}

std::size_t size_of(IntType type) {
  switch (type) {
    case IntType::kI32:
      return 4;
    case IntType::kI64:
      return 8;
    case IntType::kU8:
      return 1;
  }
  return 0;
}

double min_value(IntType type) {
  switch (type) {
    case IntType::kI32:
      return std::numeric_limits<int32_t>::min();
    case IntType::kI64:
      return static_cast<double>(std::numeric_limits<int64_t>::min());
    case IntType::kU8:
      return 0;
  }
  return 0;
}

double max_value(IntType type) {
  switch (type) {
    case IntType::kI32:
      return std::numeric_limits<int32_t>::max();
    case IntType::kI64:
      return static_cast<double>(std::numeric_limits<int64_t>::max());
    case IntType::kU8:
      return std::numeric_limits<uint8_t>::max();
  }
  return 0;
}

}  // namespace ktune
