/// `ktune query`: the best tuned config for (GPU, kernel, shape, dtype, layout), read-only.

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
#include "core/shape.hpp"
#include "kernel_templates/kernel_catalog.hpp"
#include "ktune/error.hpp"

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
};

void run_query(const QueryOptions& o) {
  const auto* desc = kernel_templates::find_kernel(o.kernel);
  desc->require_dtype(o.dtype);
  const std::string layout = resolve_layout(*desc, o.layout);
  const std::string shape = ktune::Shape::parse(o.shape).normalized(desc->dims).canonical();

  const auto path = db_path(o.db);
  auto db = open_existing(path);

  cache::Lookup lookup;
  lookup.gpu_name = choose_gpu(db, o.gpu, o.device);
  lookup.kernel = desc->name;
  lookup.shape = shape;
  lookup.dtype = o.dtype;
  lookup.layout = layout;
  auto best = db.best(lookup, !o.no_fallback);
  if (!best) {
    throw Error(
        ErrorKind::kNotFound,
        fmt::format("no tuned config for kernel {}, shape {}, dtype {}, layout '{}' on GPU '{}' in {}{}",
                    desc->name, shape, o.dtype, layout, lookup.gpu_name, path.string(),
                    o.no_fallback ? " (--no-fallback: nearest tuned shapes not considered)" : ""));
  }

  if (best->fallback) {
    std::cerr << "note: tuned for " << best->tuned_shape << ", nearest to the one asked (" << best->shape
              << ")\n";
  }
  if (o.json) {
    auto doc = nlohmann::json::parse(best->to_json());
    doc["shape"] = best->shape;
    doc["tuned_shape"] = best->tuned_shape;
    doc["fallback"] = best->fallback;
    print_json(doc);
    return;
  }
  std::cout << fmt::format("config       {}\n", best->config_name)
            << fmt::format("parameters   {}\n", best->config_json)
            << fmt::format("median       {:.3f} us (min {:.3f}, p90 {:.3f}, {} samples)\n",
                           best->stats.median_us, best->stats.min_us, best->stats.p90_us, best->stats.samples)
            << fmt::format("gpu          {}\n", best->gpu_name)
            << fmt::format("kernel       {} (template {})\n", best->kernel.name, best->kernel.source_hash)
            << fmt::format("shape        {}{}\n", best->tuned_shape, best->fallback ? " (fallback)" : "")
            << fmt::format("dtype        {}\n", best->dtype)
            << fmt::format("layout       {}\n", best->layout.empty() ? "(none)" : best->layout)
            << fmt::format("verified     {}\n",
                           best->verified ? "yes" : "NO (the kernel's description says verify = false)");
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
  cmd->add_flag(
      "--no-fallback", opts->no_fallback,
      "Answer only for the exact shape; without it an untuned shape gets the nearest tuned shape of "
      "the same kernel, dtype and GPU (flagged), e.g. --no-fallback");
  add_json_flag(*cmd, opts->json);
  std::string kernels;
  for (const auto& k : kernel_templates::kernel_catalog()) {
    kernels += fmt::format("  {:<17} {:<52} {:<15} layout {}\n", k.name, k.example_shape(),
                           fmt::join(k.dtypes, ","), k.default_layout.empty() ? "\"\"" : k.default_layout);
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
