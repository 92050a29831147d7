/// `ktune worker` (internal, hidden): the isolated process that loads, verifies, times and counts
/// candidates for a parent over a pipe (docs/design.md D5, measure/worker_main.hpp).

#include <cstdlib>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "measure/worker_main.hpp"

namespace ktune::cli {

void add_worker_command(CLI::App& app) {
  struct Args {
    int fd = -1;
    int device = 0;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("worker", "Internal: measure candidates for a parent ktune over a pipe");
  cmd->group("");  // hidden from --help: only ktune itself starts it
  cmd->add_option("--fd", args->fd, "Protocol file descriptor (a socket the parent passes)")->required();
  cmd->add_option("--device", args->device, "CUDA device ordinal")->capture_default_str();
  cmd->callback([args] { std::exit(measure::run_worker(args->fd, args->device)); });
}

}  // namespace ktune::cli
