#include "cli/cache_push.hpp"

#include <unistd.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/db_option.hpp"
#include "cli/output.hpp"
#include "ktune/error.hpp"
#include "service/auth.hpp"
#include "service/http_client.hpp"

namespace ktune::cli {
namespace {

struct PushOptions {
  std::string db;
  std::string server;
  std::string token_file;
  bool json = false;
};

/// The database's export as text, written through a private temporary file.
std::string export_text(const cache::ConfigCache& db) {
  const auto tmp = std::filesystem::temp_directory_path() / fmt::format("ktune-push-{}.json", ::getpid());
  struct Remove {
    std::filesystem::path p;
    ~Remove() {
      std::error_code ec;
      std::filesystem::remove(p, ec);
    }
  } remove{tmp};
  db.export_json(tmp);
  std::ifstream in(tmp, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void run_push(const PushOptions& o) {
  const auto path = db_path(o.db);
  const auto db = open_existing(path);
  std::optional<std::string> token;
  if (!o.token_file.empty()) token = service::read_token_file(o.token_file);
  const service::HttpAnswer answer = service::http_post_json(o.server, "/v1/results", export_text(db), token);
  if (answer.status != 200) {
    const ErrorKind kind = answer.status == 400 || answer.status == 401 || answer.status == 413
                               ? ErrorKind::kBadInput
                               : ErrorKind::kRuntime;
    throw Error(kind,
                fmt::format("{} (server {}, HTTP {})", answer.error_message(), o.server, answer.status));
  }
  nlohmann::json doc = nlohmann::json::parse(answer.body);
  if (o.json) {
    doc["db"] = path.string();
    doc["server"] = o.server;
    print_json(doc);
  } else {
    std::cout << fmt::format(
        "pushed {} to {}: {} measurement(s) added, {} already there, {} winner(s) updated\n", path.string(),
        o.server, doc.value("measurements_added", 0), doc.value("measurements_skipped", 0),
        doc.value("best_updated", 0));
  }
}

}  // namespace

void add_cache_push_command(CLI::App& cache_cmd) {
  auto o = std::make_shared<PushOptions>();
  auto* cmd = cache_cmd.add_subcommand(
      "push",
      "Send the database's measurements to a `ktune serve` (POST /v1/results); pushing twice adds nothing");
  add_db_option(*cmd, o->db);
  cmd->add_option("--server", o->server, "The server's URL, e.g. --server http://gpu-host:8787")
      ->required()
      ->type_name("URL");
  cmd->add_option("--token-file", o->token_file,
                  "File holding the server's bearer token (chmod 600), e.g. --token-file ~/.ktune-token")
      ->type_name("FILE");
  add_json_flag(*cmd, o->json);
  cmd->footer(
      "Examples:\n"
      "  ktune cache push --server http://gpu-host:8787 --token-file ~/.ktune-token --db ./h200.db\n"
      "Exit codes: 0 pushed, 1 server unreachable or failed, 2 bad token or rejected export, 4 no database.");
  cmd->callback([o] { run_push(*o); });
}

}  // namespace ktune::cli
