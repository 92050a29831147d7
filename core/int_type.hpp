#pragma once
/// IntType: the integer element types of buffers (index tensors such as a gather's row indices or a
/// paged KV cache's block table). They are buffer elements only, never a problem's dtype: DType
/// stays the floating-point types a kernel computes in, because it is also the cache key's dtype,
/// `--dtype`, the C ABI's and the runtime's dtype and the tolerance table's row, where an integer
/// would be accepted by every parser and then refused by every kernel.

#include <cstddef>
#include <optional>
#include <string_view>

namespace ktune {

enum class IntType { kI32, kI64, kU8 };

/// "i32", "i64", "u8".
std::string_view to_string(IntType type);
/// Inverse of to_string; nullopt for any other name.
std::optional<IntType> int_type_from_string(std::string_view name);
/// Bytes per element.
std::size_t size_of(IntType type);
/// The smallest and largest value of the type, as doubles (exact for i32 and u8; i64's are
/// +-2^63, the nearest doubles).
double min_value(IntType type);
double max_value(IntType type);

}  // namespace ktune
