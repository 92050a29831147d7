#pragma once
/// `ktune cache push --server URL [--token-file F]`: send this database's export to a `ktune serve`
/// (POST /v1/results), the way a fleet host hands its sweep to the team's server.

namespace CLI {
class App;
}

namespace ktune::cli {

/// Adds `push` under `ktune cache`.
void add_cache_push_command(CLI::App& cache_cmd);

}  // namespace ktune::cli
