/// `ktune serve`: the HTTP service (service/, docs/service.md). Answers lookups, results and
/// reports from the database and runs tuning jobs on this host's GPUs until SIGINT/SIGTERM, then
/// stops gracefully (the running candidate finishes, everything is committed) and exits 0.

#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/db_option.hpp"
#include "cli/stop_signals.hpp"
#include "harness/device_info.hpp"
#include "ktune/error.hpp"
#include "measure/nvml.hpp"
#include "service/server.hpp"

namespace ktune::cli {
namespace {

struct ServeArgs {
  service::ServeOptions options;
  std::string db;
  std::string token_file;
  std::string tls_cert;
  std::string tls_key;
};

/// The job GPUs' SM clock and temperature through NVML for the server's /metrics. NVML numbers GPUs
/// apart from CUDA, so each ordinal is found by its PCI bus id (read once). A GPU whose bus id or
/// sensors cannot be read has no readings, so its gauges are left out.
service::GpuSensorSource nvml_sensors() {
  struct BusIds {
    std::mutex mu;
    std::map<int, std::string> by_ordinal;
  };
  auto ids = std::make_shared<BusIds>();
  return [ids](int ordinal) -> service::GpuSensorReading {
    std::string bus_id;
    try {
      std::lock_guard lock(ids->mu);
      auto it = ids->by_ordinal.find(ordinal);
      if (it == ids->by_ordinal.end())
        it = ids->by_ordinal.emplace(ordinal, harness::query_device(ordinal).pci_bus_id).first;
      bus_id = it->second;
    } catch (const std::exception&) {
      return {};
    }
    const measure::NvmlReading r = measure::nvml_read(bus_id);
    return {r.sm_clock_mhz, r.temperature_c};
  };
}

void run_serve(ServeArgs& a) {
  service::ServeOptions o = a.options;
  o.db = db_path(a.db);
  if (!a.token_file.empty()) o.token_file = a.token_file;
  if (!a.tls_cert.empty()) o.tls_cert = a.tls_cert;
  if (!a.tls_key.empty()) o.tls_key = a.tls_key;
  if (const char* chart_js = std::getenv("KTUNE_CHART_JS"); chart_js != nullptr) o.chart_js = chart_js;
  o.gpu_sensors = nvml_sensors();
  const StopSignals signals;  // before the server's threads start, so they inherit nothing else
  service::Server server(o);
  // The one line on stdout: scripts and tests read the URL from it (port 0 picks a free port).
  std::cout << fmt::format("ktune serve: listening on {} (database {}{})", server.url(), o.db.string(),
                           o.read_only ? ", read-only" : "")
            << std::endl;
  bool listen_failed = false;
  std::thread listener([&] { listen_failed = !server.run(); });
  while (!signals.flag().load() && !listen_failed)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (signals.flag().load())
    std::cerr << fmt::format(
        "ktune serve: {}: stopping (running jobs finish their candidate and are queued again)\n",
        signals.signal_name());
  server.stop();
  listener.join();
  if (listen_failed && !signals.flag().load()) throw Error(ErrorKind::kRuntime, "the HTTP listener stopped");
  std::cerr << "ktune serve: stopped\n";
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto a = std::make_shared<ServeArgs>();
  auto* cmd = app.add_subcommand(
      "serve", "Serve lookups, results, reports and tuning jobs over HTTP (docs/service.md)");
  cmd->add_option("--listen", a->options.listen,
                  "HOST:PORT to listen on, e.g. --listen 127.0.0.1:8787 (port 0: any free port). An address "
                  "other than loopback needs --token-file")
      ->capture_default_str()
      ->type_name("HOST:PORT");
  add_db_option(*cmd, a->db);
  cmd->add_option(
         "--token-file", a->token_file,
         "File holding the bearer token that routes changing anything (POST /v1/results, jobs) "
         "need; must not be readable by group or others (chmod 600), e.g. --token-file ~/.ktune-token")
      ->type_name("FILE");
  cmd->add_option("--devices", a->options.devices,
                  "GPUs tuning jobs measure on: all, none, or a list such as 0,1 (one job at a time a GPU; "
                  "compile-only jobs need none)")
      ->capture_default_str()
      ->type_name("all|none|LIST");
  cmd->add_flag("--read-only", a->options.read_only,
                "Serve lookups and reports only: no job, no import (the database is opened read-only)");
  cmd->add_option(
         "--threads", a->options.threads,
         "Event-loop threads answering requests (each holds any number of connections), e.g. --threads 64")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--max-body-bytes", a->options.max_body_bytes,
                  "Largest request body accepted (413 above), e.g. --max-body-bytes 67108864")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--tls-cert", a->tls_cert, "PEM certificate: serve HTTPS (with --tls-key)")
      ->type_name("FILE");
  cmd->add_option("--tls-key", a->tls_key, "PEM private key of --tls-cert")->type_name("FILE");
  cmd->footer(
      "Examples:\n"
      "  ktune serve --db ./h200.db\n"
      "  curl 'http://127.0.0.1:8787/v1/best?kernel=gemm&shape=m=16,n=4096,k=4096&dtype=bf16'\n"
      "  openssl rand -hex 32 > token && chmod 600 token\n"
      "  ktune serve --listen 0.0.0.0:8787 --token-file token --tls-cert cert.pem --tls-key key.pem\n"
      "The first line on stdout names the URL. SIGINT/SIGTERM: stop accepting, let running jobs finish "
      "their\n"
      "candidate, commit, exit 0; a restart resumes interrupted jobs. Exit codes: 0 stopped, 1 runtime\n"
      "failure (port in use), 2 bad option (token file others can read, non-loopback address without a "
      "token).");
  cmd->callback([a] { run_serve(*a); });
}

}  // namespace ktune::cli
