#pragma once
/// Output conventions shared by every command (docs/cli.md "Conventions"): with `--json`, exactly one JSON
/// document goes to stdout and any human text to stderr; without it, human text goes to stdout.

#include <iosfwd>

#include <nlohmann/json_fwd.hpp>

namespace CLI {
class App;
}

namespace ktune::cli {

/// Adds `--json` to `cmd`, storing into `json`.
void add_json_flag(CLI::App& cmd, bool& json);

/// Prints `doc` as the command's one JSON document on stdout (indented, newline-terminated).
void print_json(const nlohmann::json& doc);

/// Where human-readable text goes: stderr when `json` is set, else stdout.
std::ostream& human_out(bool json);

}  // namespace ktune::cli
