/// Fuzz target: shape-set TOML (configs/shapes/*.toml, tuner::load_shape_set).

#include "fuzz_contract.hpp"
#include "input_file.hpp"
#include "tuner/inputs/shape_set.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static ktune::fuzz::InputFile file(".toml");
  const std::filesystem::path& path = file.write(data, size);
  ktune::fuzz::expect_contract("shape_set", [&] {
    const ktune::tuner::ShapeSet set = ktune::tuner::load_shape_set(path);
    for (const auto& shape : set.shapes) (void)shape.normalized(set.dims);
  });
  return 0;
}
