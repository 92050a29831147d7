#pragma once
/// The top-level `ktune` app: its description, `--version`, the examples footer, and the one
/// place where failures become exit codes (docs/cli.md "Conventions": 0 ok, 1 runtime, 2 bad usage or input,
/// 3 no GPU or driver, 4 not found).

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace ktune::cli {

/// Thrown by a command that has done its work and printed its output but must exit with a code of
/// its own: a sweep stopped by SIGINT or SIGTERM exits 128 + the signal (130, 143). run_app returns
/// `code` without printing anything.
struct ExitStatus {
  int code = 0;
};

/// The command line run_app was given (argv[0] first); empty before run_app.
const std::vector<std::string>& command_line();

/// The version `ktune --version` prints, e.g. "0.1.0".
const char* version();

/// Sets the app's name, description, `--version` flag, footer and "a subcommand is required".
void configure_app(CLI::App& app);

/// Parses the command line and runs the chosen subcommand's callback. Returns the exit code:
/// CLI11 parse errors give 2 (help and version 0); a ktune::Error prints
/// "ktune: error: <message>" (plus its detail) to stderr and gives exit_code(kind); ExitStatus
/// gives its code; any other exception gives 1.
int run_app(CLI::App& app, int argc, char** argv);

}  // namespace ktune::cli
