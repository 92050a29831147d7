/// Fuzz target: a config as JSON, the readers of it: Config::from_json_text (the cache's
/// config_json; a parsed config must survive its own text), and, for a document that parses (the
/// CLI's `--config` parses it first), Config::from_json and measure::CopyConfig::from_json (the
/// built-in copy kernel's).

#include <nlohmann/json.hpp>

#include <string_view>

#include "core/config.hpp"
#include "fuzz_contract.hpp"
#include "measure/copy_kernel.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ktune::fuzz::expect_contract("config_json", [&] {
    const ktune::Config config = ktune::Config::from_json_text(text);
    ktune::fuzz::require("config_json", ktune::Config::from_json_text(config.to_json_text()) == config,
                         "from_json_text(to_json_text()) differs from the parsed config");
    (void)config.key();
  });
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;
  ktune::fuzz::expect_contract("config_json", [&] {
    const auto config = ktune::Config::from_json(json);
    ktune::fuzz::require("config_json", ktune::Config::from_json(config.to_json()) == config,
                         "Config does not survive to_json()");
  });
  ktune::fuzz::expect_contract("config_json", [&] { (void)ktune::measure::CopyConfig::from_json(json); });
  return 0;
}
