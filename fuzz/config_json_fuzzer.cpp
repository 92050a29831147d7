/// Fuzz target: a config as JSON (`--config '{"template":"tiled","params":{...}}'`, the cache's
/// config_json; tuner::Config::from_json_text). A parsed config must survive its own text.

#include <string_view>

#include "fuzz_contract.hpp"
#include "tuner/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ktune::fuzz::expect_contract("config_json", [&] {
    const ktune::tuner::Config config = ktune::tuner::Config::from_json_text(text);
    ktune::fuzz::require("config_json", ktune::tuner::Config::from_json_text(config.to_json_text()) == config,
                         "from_json_text(to_json_text()) differs from the parsed config");
    (void)config.key();
  });
  return 0;
}
