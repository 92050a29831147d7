/// Fuzz target: problem shape strings (`m=16,n=4096,k=4096`, Shape::parse). A parsed shape
/// must survive its canonical text: parse(canonical()) gives the same shape.

#include <string_view>

#include "core/shape.hpp"
#include "fuzz_contract.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ktune::fuzz::expect_contract("shape", [&] {
    const ktune::Shape shape = ktune::Shape::parse(text);
    const std::string canonical = shape.canonical();
    ktune::fuzz::require("shape", ktune::Shape::parse(canonical) == shape,
                         "parse(canonical()) differs from the parsed shape");
    ktune::fuzz::require("shape", shape.distance(shape) == 0.0, "a shape's distance to itself is not 0");
  });
  return 0;
}
