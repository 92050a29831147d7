#include "tuner/space/problem_context.hpp"

#include "core/dtype.hpp"

namespace ktune::tuner {

int64_t dtype_bytes(std::string_view dtype) {
  return static_cast<int64_t>(size_of(dtype_from_string(dtype)));
}

}  // namespace ktune::tuner
