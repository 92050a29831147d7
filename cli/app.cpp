#include "cli/app.hpp"

#include <exception>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/error_report.hpp"
#include "ktune/error.hpp"

namespace ktune::cli {

namespace {
std::vector<std::string>& stored_command_line() {
  static std::vector<std::string> line;
  return line;
}
}  // namespace

const char* version() { return KTUNE_VERSION_STRING; }

const std::vector<std::string>& command_line() { return stored_command_line(); }

void configure_app(CLI::App& app) {
  app.name("ktune");
  app.description(
      "ktune tunes CUDA kernels for the GPU it runs on, remembers the winners in a SQLite database "
      "and answers which config is best.");
  app.set_version_flag("--version", std::string("ktune ") + version(), "Print the version and exit");
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  ktune devices --json\n"
      "  ktune query --kernel gemm --shape m=16,n=4096,k=4096 --dtype bf16 --json\n"
      "  ktune cache list --db ./h200.db\n"
      "\n"
      "Database: --db PATH, else $KTUNE_DB, else $XDG_CACHE_HOME/ktune/ktune.db (~/.cache/ktune/ktune.db).\n"
      "Exit codes: 0 ok, 1 runtime failure, 2 bad usage or input, 3 no GPU/driver, 4 not found;\n"
      "a sweep stopped by SIGINT / SIGTERM after committing: 130 / 143.\n"
      "Run `ktune COMMAND --help` for a command's options.");
}

int run_app(CLI::App& app, int argc, char** argv) {
  stored_command_line().assign(argv, argv + argc);
  try {
    app.parse(argc, argv);
    return 0;
  } catch (const ExitStatus& e) {
    return e.code;
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help, version or the parse error
    return code == 0 ? 0 : exit_code(ErrorKind::kBadInput);
  } catch (const Error& e) {
    return report_error(e);
  } catch (const std::exception& e) {
    return report_error(Error(ErrorKind::kRuntime, e.what()));
  } catch (...) {
    return report_error(Error(ErrorKind::kRuntime, "unknown failure"));
  }
}

}  // namespace ktune::cli
