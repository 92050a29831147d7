/// Fuzz target: preset TOML (configs/presets/*.toml, tuner::load_preset). The shape sets a preset
/// names are read from the source tree's configs/ (or $KTUNE_CONFIGS_DIR).

#include "fuzz_contract.hpp"
#include "input_file.hpp"
#include "tuner/inputs/preset.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static ktune::fuzz::InputFile file(".toml");
  const std::filesystem::path& path = file.write(data, size);
  ktune::fuzz::expect_contract("preset", [&] {
    const ktune::tuner::Preset preset = ktune::tuner::load_preset(path.string());
    for (const auto& shape : preset.shapes) (void)shape.canonical();
  });
  return 0;
}
