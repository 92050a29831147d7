#pragma once
/// The `ktune` subcommands. Each lives in its own file (`<name>_command.cpp`) and registers
/// itself on the top-level app; cli/main.cpp calls every `add_*_command` once.
///
/// To add a command: write `cli/<name>_command.cpp` defining `add_<name>_command`, declare it
/// here, list the source in cli/CMakeLists.txt and call it from cli/main.cpp. Inside, put the
/// work in the subcommand's callback and report failures by throwing ktune::Error (its kind
/// is the exit code); use add_db_option / add_json_flag / print_json for the shared options.

namespace CLI {
class App;
}

namespace ktune::cli {

/// `ktune devices [--json]`: the CUDA devices of this machine.
void add_devices_command(CLI::App& app);
/// `ktune query --kernel K --shape S --dtype D ...`: the best tuned config.
void add_query_command(CLI::App& app);
/// `ktune cache list|export|import|merge|prune|verify`: database maintenance.
void add_cache_command(CLI::App& app);
/// `ktune report --format csv|json|html|md --out FILE ...`: reports of the database (cli/report_command.cpp).
void add_report_command(CLI::App& app);
/// `ktune bench --kernel K --shape S --dtype D ...`: time one kernel at one config (cli/bench_command.cpp).
void add_bench_command(CLI::App& app);
/// `ktune tune (--kernel K | --preset P) ...`: the tuning sweep (cli/tune_command.cpp).
void add_tune_command(CLI::App& app);
/// `ktune serve [--listen HOST:PORT] ...`: the HTTP service (cli/serve_command.cpp, docs/service.md).
void add_serve_command(CLI::App& app);
/// `ktune worker --fd N` (internal, hidden): the isolated measuring process (cli/worker_command.cpp).
void add_worker_command(CLI::App& app);

}  // namespace ktune::cli
