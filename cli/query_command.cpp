/// `ktune query`: the best tuned config for (GPU, kernel, shape, dtype, layout), read-only.

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "cli/commands.hpp"
#include "cli/db_option.hpp"
#include "cli/gpu_choice.hpp"
#include "cli/kernel_dir_option.hpp"
#include "cli/layout_option.hpp"
#include "cli/output.hpp"
#include "core/dtype.hpp"
#include "core/shape.hpp"
#include "kernel_templates/kernel_catalog.hpp"
#include "ktune/error.hpp"
#ifdef KTUNE_WITH_SERVICE
#include "service/http_client.hpp"
#endif

namespace ktune::cli {
namespace {

struct QueryOptions {
  std::string kernel;
  std::string shape;
  std::string dtype;
  std::optional<std::string> layout;  ///< absent: the kernel's default layout
  std::string gpu;
  int device = -1;
  std::string db;
  bool no_fallback = false;
  bool json = false;
  std::string server;  ///< ask `ktune serve` at this URL instead of a file
};

/// The answer, as `--json` (the document) or as text; the same for a file and a server.
void print_answer(const nlohmann::json& doc, bool json) {
  const auto text = [&](const char* key) { return doc.value(key, std::string()); };
  const auto number = [&](const char* key) { return doc.value(key, 0.0); };
  const bool fallback = doc.value("fallback", false);
  if (fallback) {
    std::cerr << "note: tuned for " << text("tuned_shape") << ", nearest to the one asked (" << text("shape")
              << ")\n";
  }
  if (json) {
    print_json(doc);
    return;
  }
  const std::string layout = text("layout");
  std::cout << fmt::format("config       {}\n", text("config_name"))
            << fmt::format("parameters   {}\n", doc.value("config", nlohmann::json::object()).dump())
            << fmt::format("median       {:.3f} us (min {:.3f}, p90 {:.3f}, {} samples)\n",
                           number("median_us"), number("min_us"), number("p90_us"),
                           doc.value("samples", int64_t{0}))
            << fmt::format("gpu          {}\n", text("gpu"))
            << fmt::format("kernel       {} (template {})\n", text("kernel"), text("source_hash"))
            << fmt::format("shape        {}{}\n", text("tuned_shape"), fallback ? " (fallback)" : "")
            << fmt::format("dtype        {}\n", text("dtype"))
            << fmt::format("layout       {}\n", layout.empty() ? "(none)" : layout)
            << fmt::format("verified     {}\n", doc.value("verified", true)
                                                    ? "yes"
                                                    : "NO (the kernel's description says verify = false)");
}

#ifdef KTUNE_WITH_SERVICE
/// `--server URL`: the same question to `ktune serve` (GET /v1/best); its status decides the exit code.
void run_server_query(const QueryOptions& o) {
  using service::url_encode;
  std::string target = "/v1/best?kernel=" + url_encode(o.kernel) + "&shape=" + url_encode(o.shape) +
                       "&dtype=" + url_encode(o.dtype);
  if (o.layout) target += "&layout=" + url_encode(*o.layout);
  if (!o.gpu.empty()) target += "&gpu=" + url_encode(o.gpu);
  if (o.no_fallback) target += "&fallback=false";
  const service::HttpAnswer answer = service::http_get(o.server, target);
  if (answer.status == 200) {
    print_answer(nlohmann::json::parse(answer.body), o.json);
    return;
  }
  const ErrorKind kind = answer.status == 404   ? ErrorKind::kNotFound
                         : answer.status == 400 ? ErrorKind::kBadInput
                         : answer.status == 503 ? ErrorKind::kNoDevice
                                                : ErrorKind::kRuntime;
  throw Error(kind, fmt::format("{} (server {}, HTTP {})", answer.error_message(), o.server, answer.status));
}
#endif

void run_query(const QueryOptions& o) {
#ifdef KTUNE_WITH_SERVICE
  if (!o.server.empty()) {
    run_server_query(o);
    return;
  }
#endif
  const auto path = db_path(o.db);
  std::optional<cache::ConfigCache> opened;
  const auto db_at_path = [&]() -> cache::ConfigCache& {
    if (!opened) opened.emplace(open_existing(path));
    return *opened;
  };
  // A kernel the catalog does not know is asked of the database only when there is one, so that a
  // misspelt name is answered as such before a missing database.
  kernel_templates::KernelDescriptor stored_only;
  const auto* desc = kernel_templates::lookup_kernel(
      o.kernel, o.shape, o.dtype,
      [&](std::string_view name) {
        return std::filesystem::exists(path) && db_at_path().current_source_hash(name).has_value();
      },
      stored_only);
  const DType dtype = desc->parse_dtype(o.dtype);
  const std::string layout = resolve_layout(*desc, o.layout);
  const std::string shape = ktune::Shape::parse(o.shape).normalized(desc->dims).canonical();
  auto& db = db_at_path();

  cache::Lookup lookup;
  lookup.gpu_name = choose_gpu(db, o.gpu, o.device);
  lookup.kernel = desc->name;
  lookup.shape = shape;
  lookup.dtype = dtype;
  lookup.layout = layout;
  auto best = db.best(lookup, !o.no_fallback);
  if (!best) {
    throw Error(
        ErrorKind::kNotFound,
        fmt::format("no tuned config for kernel {}, shape {}, dtype {}, layout '{}' on GPU '{}' in {}{}",
                    desc->name, shape, to_string(dtype), layout, lookup.gpu_name, path.string(),
                    o.no_fallback ? " (--no-fallback: nearest tuned shapes not considered)" : ""));
  }

  print_answer(nlohmann::json::parse(best->to_json()), o.json);
}

}  // namespace

void add_query_command(CLI::App& app) {
  auto opts = std::make_shared<QueryOptions>();
  auto* cmd =
      app.add_subcommand("query", "Print the best tuned config for a kernel, shape and dtype on a GPU");
  cmd->add_option("--kernel", opts->kernel,
                  "Kernel name, e.g. --kernel gemm (one of: " + kernel_templates::known_kernel_names() + ")")
      ->required()
      ->type_name("NAME");
  cmd->add_option("--shape", opts->shape,
                  "Problem dimensions as name=value pairs, every dimension of the kernel, any order, e.g. "
                  "--shape m=16,n=4096,k=4096 (values 1 to 2^31-1)")
      ->required()
      ->type_name("DIMS");
  cmd->add_option("--dtype", opts->dtype,
                  "Data type, e.g. --dtype bf16 (f32, f16, bf16, fp8e4m3; per kernel)")
      ->required()
      ->type_name("DTYPE");
  cmd->add_option("--layout", opts->layout,
                  "Layout or mode of the kernel, part of the key, e.g. --layout nn (default: the "
                  "kernel's; each kernel's values are listed below)")
      ->type_name("TEXT");
  auto* gpu =
      cmd->add_option("--gpu", opts->gpu,
                      "GPU model name as `ktune devices` prints it, e.g. --gpu \"NVIDIA H200\" (default: "
                      "device 0 of this machine, else the database's only GPU)")
          ->type_name("NAME");
  auto* device = cmd->add_option("--device", opts->device,
                                 "Use the model of this machine's CUDA device N, e.g. --device 0 "
                                 "(needs the driver; exit 3 without)")
                     ->type_name("N")
                     ->check(CLI::NonNegativeNumber);
  gpu->excludes(device);
  device->excludes(gpu);
  add_kernel_dir_option(*cmd);
  add_db_option(*cmd, opts->db);
#ifdef KTUNE_WITH_SERVICE
  auto* server = cmd->add_option("--server", opts->server,
                                 "Ask a `ktune serve` at this URL instead of a database file, e.g. --server "
                                 "http://gpu-host:8787 (same output and exit codes)")
                     ->type_name("URL");
  server->excludes(device);
  server->excludes(cmd->get_option("--db"));
#endif
  cmd->add_flag(
      "--no-fallback", opts->no_fallback,
      "Answer only for the exact shape; without it an untuned shape gets the nearest tuned shape of "
      "the same kernel, dtype and GPU (flagged), e.g. --no-fallback");
  add_json_flag(*cmd, opts->json);
  std::string kernels;
  for (const auto& k : kernel_templates::kernel_catalog()) {
    kernels += fmt::format("  {:<17} {:<52} {:<15} layout {}\n", k.name, k.example_shape(),
                           dtype_names(k.dtypes, ","), k.default_layout.empty() ? "\"\"" : k.default_layout);
  }
  cmd->footer(
      "Examples:\n"
      "  ktune query --kernel gemm --shape m=16,n=4096,k=4096 --dtype bf16\n"
      "  ktune query --kernel gemm --shape m=16,n=4096,k=4096 --dtype bf16 --layout nn\n"
      "  ktune query --kernel rmsnorm --shape rows=16,hidden=4096 --dtype f16 --gpu \"NVIDIA H200\" --json\n"
      "Kernels, their dimensions (example shape), dtypes and default layout:\n" +
      kernels + "Layouts (the first is the default; another value exits 2):\n" + layouts_help() +
      "Exit codes: 0 found, 2 bad kernel/shape/dtype/layout, 3 --device without a GPU, 4 nothing tuned or no "
      "database.");
  cmd->callback([opts] { run_query(*opts); });
}

}  // namespace ktune::cli
