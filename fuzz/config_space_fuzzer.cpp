/// Fuzz target: config-space TOML (configs/spaces/*.toml, tuner::ConfigSpace::parse).

#include <string>
#include <string_view>

#include "fuzz_contract.hpp"
#include "tuner/space/config_space.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ktune::fuzz::expect_contract("config_space", [&] {
    const ktune::tuner::ConfigSpace space = ktune::tuner::ConfigSpace::parse(text, "fuzz.toml");
    (void)space.templates().size();
  });
  return 0;
}
