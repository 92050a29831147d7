/// The `ktune` executable: registers every command and runs the one asked for.

#include <CLI/CLI.hpp>

#include "cli/app.hpp"
#include "cli/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app;
  ktune::cli::configure_app(app);
  // One line a command (cli/commands.hpp says how to add one).
  ktune::cli::add_devices_command(app);
  ktune::cli::add_query_command(app);
  ktune::cli::add_cache_command(app);
  ktune::cli::add_report_command(app);
  ktune::cli::add_bench_command(app);
  ktune::cli::add_tune_command(app);
#ifdef KTUNE_WITH_SERVICE
  ktune::cli::add_serve_command(app);
#endif
  ktune::cli::add_worker_command(app);
  return ktune::cli::run_app(app, argc, argv);
}
