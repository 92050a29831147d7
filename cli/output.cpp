#include "cli/output.hpp"

#include <iostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace ktune::cli {

void add_json_flag(CLI::App& cmd, bool& json) {
  cmd.add_flag("--json", json,
               "Print one JSON document on stdout (human text goes to stderr), e.g. `... --json | jq .`");
}

void print_json(const nlohmann::json& doc) { std::cout << doc.dump(2) << "\n" << std::flush; }

std::ostream& human_out(bool json) { return json ? std::cerr : std::cout; }

}  // namespace ktune::cli
