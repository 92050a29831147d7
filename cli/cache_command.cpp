/// `ktune cache list|export|import|merge|prune|verify|migrate`: inspect and maintain the database.

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "cli/commands.hpp"
#ifdef KTUNE_WITH_SERVICE
#include "cli/cache_push.hpp"
#endif
#include "cli/db_option.hpp"
#include "cli/output.hpp"
#include "core/dtype.hpp"
#include "kernel_templates/kernel_catalog.hpp"
#include "ktune/error.hpp"

namespace ktune::cli {
namespace {

/// Options shared by the cache subcommands; each subcommand fills the fields it uses.
struct CacheOptions {
  std::string db;
  bool json = false;
  cache::Filter filter;
  std::string dtype;  ///< `list --dtype`, read into filter.dtype when the command runs
  std::string out;
  std::string in;
  std::vector<std::string> sources;
};

nlohmann::json stats_json(const cache::MergeStats& s) {
  return {{"measurements_added", s.measurements_added},
          {"measurements_skipped", s.measurements_skipped},
          {"best_updated", s.best_updated}};
}

std::string stats_text(const cache::MergeStats& s) {
  return fmt::format("{} measurements added, {} already present, {} best configs updated",
                     s.measurements_added, s.measurements_skipped, s.best_updated);
}

void run_list(const CacheOptions& o) {
  const auto path = db_path(o.db);
  auto db = open_existing(path);
  cache::Filter filter = o.filter;
  filter.dtype = dtype_filter_from_string(o.dtype);
  const auto rows = db.list_best(filter);
  if (o.json) {
    nlohmann::json best = nlohmann::json::array();
    for (const auto& b : rows) best.push_back(nlohmann::json::parse(b.to_json()));
    print_json({{"db", path.string()}, {"count", rows.size()}, {"best", best}});
    return;
  }
  std::cout << fmt::format("{}: {} best config(s)\n", path.string(), rows.size());
  if (rows.empty()) return;
  std::cout << fmt::format("{:<24} {:<16} {:<8} {:<36} {:>12}  {}\n", "GPU", "KERNEL", "DTYPE", "SHAPE",
                           "MEDIAN_US", "CONFIG");
  for (const auto& b : rows) {
    std::cout << fmt::format("{:<24} {:<16} {:<8} {:<36} {:>12.3f}  {}\n", b.gpu_name, b.kernel.name,
                             to_string(b.dtype), b.tuned_shape, b.stats.median_us, b.config_name);
  }
}

void run_export(const CacheOptions& o) {
  const auto path = db_path(o.db);
  auto db = open_existing(path);
  db.export_json(o.out);
  if (o.json) {
    print_json({{"db", path.string()}, {"out", o.out}});
  } else {
    std::cout << "exported " << path.string() << " to " << o.out << "\n";
  }
}

void run_import(const CacheOptions& o) {
  const auto path = db_path(o.db);
  const bool created = !std::filesystem::exists(path);
  cache::MergeStats stats;
  try {
    auto db = open_for_writing(path);
    stats = db.import_json(o.in);
  } catch (...) {
    // A database this import made holds nothing of the refused file: leave no empty one behind.
    if (created) {
      std::error_code ec;
      for (const char* suffix : {"", "-wal", "-shm", "-journal"})
        std::filesystem::remove(path.string() + suffix, ec);
    }
    throw;
  }
  if (o.json) {
    auto doc = stats_json(stats);
    doc["db"] = path.string();
    doc["in"] = o.in;
    print_json(doc);
  } else {
    std::cout << "imported " << o.in << " into " << path.string() << ": " << stats_text(stats) << "\n";
  }
}

/// The GPU models a database holds, sorted.
std::set<std::string> gpu_names(const std::string& path) {
  std::set<std::string> names;
  for (const auto& g : cache::ConfigCache::open(path, cache::ConfigCache::Mode::kReadOnly).gpus())
    names.insert(g.name);
  return names;
}

/// A warning when the sources name different GPU models (shards of one sweep should not): their
/// rows stay apart, since the GPU is part of every key, but a shard run on the wrong machine would
/// leave the other GPU's keys untuned. Sources with no GPU (an empty shard) are left out.
std::optional<std::string> gpu_mismatch(const std::vector<std::string>& sources,
                                        const std::vector<std::set<std::string>>& gpus) {
  std::map<std::set<std::string>, std::vector<std::string>> by_set;
  for (size_t i = 0; i < sources.size(); ++i)
    if (!gpus[i].empty()) by_set[gpus[i]].push_back(sources[i]);
  if (by_set.size() <= 1) return std::nullopt;
  std::vector<std::string> parts;
  for (const auto& [names, paths] : by_set)
    parts.push_back(fmt::format("{} in {}", fmt::join(names, " + "), fmt::join(paths, ", ")));
  return fmt::format(
      "the databases merged hold different GPUs ({}); their results stay apart (the GPU is part "
      "of every key), but shards of one sweep should all have run on one GPU model",
      fmt::join(parts, "; "));
}

void run_merge(const CacheOptions& o) {
  const auto path = db_path(o.db);
  for (const auto& src : o.sources) {
    std::error_code ec;
    if (std::filesystem::equivalent(src, path, ec)) {
      throw Error(ErrorKind::kBadInput, "cannot merge " + src + " into itself");
    }
  }
  std::vector<std::set<std::string>> gpus;
  for (const auto& src : o.sources) gpus.push_back(gpu_names(src));
  const auto mismatch = gpu_mismatch(o.sources, gpus);
  if (mismatch) std::cerr << "ktune: warning: " << *mismatch << "\n";
  auto db = open_for_writing(path);
  nlohmann::json per_source = nlohmann::json::array();
  cache::MergeStats total;
  size_t i = 0;
  for (const auto& src : o.sources) {
    const auto stats = db.merge(src);
    total.measurements_added += stats.measurements_added;
    total.measurements_skipped += stats.measurements_skipped;
    total.best_updated += stats.best_updated;
    auto entry = stats_json(stats);
    entry["path"] = src;
    entry["gpus"] = gpus[i++];
    per_source.push_back(entry);
    human_out(o.json) << "merged " << src << ": " << stats_text(stats) << "\n";
  }
  if (o.json) {
    auto doc = stats_json(total);
    doc["db"] = path.string();
    doc["sources"] = per_source;
    doc["warnings"] = mismatch ? nlohmann::json::array({*mismatch}) : nlohmann::json::array();
    print_json(doc);
  }
}

void run_prune(const CacheOptions& o) {
  const auto path = db_path(o.db);
  const auto hashes = kernel_templates::current_template_hashes();
  auto db = open_for_writing(path);
  if (hashes.empty()) {
    human_out(o.json) << "the kernel catalog knows no template hashes (no built-in templates), so no row is "
                         "stale; nothing to prune\n";
  }
  for (const auto& [kernel, hash] : hashes) {
    human_out(o.json) << "current template of " << kernel << ": " << hash << "\n";
  }
  const auto stats = db.prune(hashes);
  if (o.json) {
    print_json({{"db", path.string()},
                {"current_hashes", hashes},
                {"kernels_removed", stats.kernels_removed},
                {"measurements_removed", stats.measurements_removed},
                {"compile_entries_removed", stats.compile_entries_removed}});
  } else {
    std::cout << fmt::format(
        "pruned {}: {} stale kernel(s), {} measurement(s), {} compile cache entr(ies) removed\n",
        path.string(), stats.kernels_removed, stats.measurements_removed, stats.compile_entries_removed);
  }
}

void run_verify(const CacheOptions& o) {
  const auto path = db_path(o.db);
  cache::VerifyReport report;
  int schema = 0;
  try {
    auto db = open_existing(path);
    schema = db.schema_version();
    report = db.verify();
  } catch (const Error& e) {
    // A file that cannot even be opened as a ktune database fails verification too; --json
    // still gets its document so scripts need not parse stderr.
    if (e.kind() != ErrorKind::kBadInput || !o.json) throw;
    print_json({{"db", path.string()}, {"ok", false}, {"schema_version", nullptr}, {"problems", {e.what()}}});
    throw;
  }
  if (o.json) {
    print_json({{"db", path.string()},
                {"ok", report.ok},
                {"schema_version", schema},
                {"problems", report.problems}});
  } else {
    std::cout << path.string() << ": " << (report.ok ? "ok" : "FAILED") << " (schema version " << schema
              << ")\n";
    for (const auto& p : report.problems) std::cout << "  " << p << "\n";
  }
  if (!report.ok) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("{} failed verification ({} problem(s))", path.string(), report.problems.size()));
  }
}

void run_migrate(const CacheOptions& o) {
  const auto path = db_path(o.db);
  const int before = cache::ConfigCache::stored_schema_version(path);  // missing: exit 4
  const int after = open_for_writing(path).schema_version();
  if (o.json) {
    print_json({{"db", path.string()},
                {"schema_version_before", before},
                {"schema_version", after},
                {"migrated", before != after}});
  } else if (before == after) {
    std::cout << fmt::format("{}: already at schema version {}\n", path.string(), after);
  } else {
    std::cout << fmt::format("{}: migrated from schema version {} to {}\n", path.string(), before, after);
  }
}

CLI::App* add_leaf(CLI::App& parent, const std::shared_ptr<CacheOptions>& opts, const std::string& name,
                   const std::string& description, const std::string& examples) {
  auto* cmd = parent.add_subcommand(name, description);
  add_db_option(*cmd, opts->db);
  add_json_flag(*cmd, opts->json);
  cmd->footer("Examples:\n" + examples);
  return cmd;
}

}  // namespace

void add_cache_command(CLI::App& app) {
  auto opts = std::make_shared<CacheOptions>();
  auto* cache_cmd = app.add_subcommand("cache", "Inspect and maintain the tuning database");
  cache_cmd->require_subcommand(1);
  cache_cmd->footer(
      "Examples:\n"
      "  ktune cache list --db ./h200.db\n"
      "  ktune cache export --out h200.json\n"
      "  ktune cache merge other.db --db ./all.db\n"
      "  ktune cache verify --json");

  auto* list =
      add_leaf(*cache_cmd, opts, "list", "List the best config of every tuned (GPU, kernel, shape, dtype)",
               "  ktune cache list\n  ktune cache list --kernel gemm --dtype bf16 --json");
  list->add_option("--kernel", opts->filter.kernel, "Only this kernel, e.g. --kernel gemm")
      ->type_name("NAME");
  list->add_option("--gpu", opts->filter.gpu_name, "Only this GPU model, e.g. --gpu \"NVIDIA H200\"")
      ->type_name("NAME");
  list->add_option("--dtype", opts->dtype, "Only this dtype, e.g. --dtype bf16")->type_name("DTYPE");
  list->callback([opts] { run_list(*opts); });

  auto* exp = add_leaf(*cache_cmd, opts, "export",
                       "Write every GPU, kernel, run, measurement and best row as one JSON document "
                       "(docs/export-format.md; the compile cache is not exported)",
                       "  ktune cache export --out h200.json --db ./h200.db");
  exp->add_option("--out", opts->out, "File to write, e.g. --out h200.json")->required()->type_name("FILE");
  exp->callback([opts] { run_export(*opts); });

  auto* imp = add_leaf(*cache_cmd, opts, "import",
                       "Import an export into the database (created when missing); rows already present are "
                       "skipped",
                       "  ktune cache import h200.json --db ./all.db");
  imp->add_option("file", opts->in, "Export file to read, e.g. h200.json")
      ->required()
      ->check(CLI::ExistingFile)
      ->type_name("FILE");
  imp->callback([opts] { run_import(*opts); });

  auto* merge =
      add_leaf(*cache_cmd, opts, "merge",
               "Merge other ktune databases into this one: a measurement already present (same GPU, "
               "kernel hash, shape, dtype, config, run) is skipped; each key's best becomes the lowest "
               "median of the two",
               "  ktune cache merge a.db b.db --db ./all.db\n"
               "  ktune cache merge shard-*.db --db ./all.db     # the shards of `ktune tune --shard I/N`\n"
               "A source holding another GPU model than the others is reported (a warning; rows stay apart "
               "per GPU). Merging a database twice adds nothing.");
  merge->add_option("sources", opts->sources, "Databases to merge in, e.g. a.db b.db")
      ->required()
      ->check(CLI::ExistingFile)
      ->type_name("DB...");
  merge->callback([opts] { run_merge(*opts); });

  auto* prune = add_leaf(*cache_cmd, opts, "prune",
                         "Remove kernels whose template source changed since they were tuned (stale rows), "
                         "with their measurements and best configs",
                         "  ktune cache prune --db ./h200.db");
  prune->callback([opts] { run_prune(*opts); });

  auto* verify =
      add_leaf(*cache_cmd, opts, "verify",
               "Check the database: SQLite integrity check plus tables, columns and schema version; "
               "exit 2 when it fails",
               "  ktune cache verify --db ./h200.db --json");
  verify->callback([opts] { run_verify(*opts); });

  auto* migrate = add_leaf(*cache_cmd, opts, "migrate",
                           "Bring a database written by an older ktune to this version's schema, in place "
                           "(what any command that writes to it does first; read-only commands such as "
                           "report and query refuse an older schema)",
                           "  ktune cache migrate --db ./h200.db");
  migrate->callback([opts] { run_migrate(*opts); });
#ifdef KTUNE_WITH_SERVICE
  add_cache_push_command(*cache_cmd);
#endif
}

}  // namespace ktune::cli
