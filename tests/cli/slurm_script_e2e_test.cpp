// scripts/slurm/ktune-sweep.sbatch without Slurm: its array-task branch run by hand with the
// variables Slurm sets (an array starting at 1), then its merge branch; compile-only, so no GPU.
// The merged database holds the keys of the whole sweep once each.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include "cache/config_cache.hpp"
#include "tests/cli/ktune_runner.hpp"
#include "tests/cli/test_db_fixture.hpp"

namespace ktune::testing {
namespace slurm_script_e2e_test {  // named: the unity build batches this file with others

constexpr const char* kSpace = R"TOML(
kernel = "rmsnorm"
dims = ["rows", "hidden"]
description = "one rmsnorm config (slurm_script_e2e_test)"
[[template]]
name = "rowwise"
layouts = ["", "residual"]
[template.params]
THREADS = [256]
ROWS = [1]
VEC = [4]
REG = [0]
)TOML";

int run_shell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(SlurmScript, ArrayTasksThenTheMergeHoldEveryKeyOnce) {
  TempDir dir;
  std::ofstream(dir / "one.toml") << kSpace;
  const std::string script = std::string(KTUNE_SOURCE_DIR) + "/scripts/slurm/ktune-sweep.sbatch";
  const std::string env = "KTUNE=" + ktune_binary() + " KTUNE_SWEEP_DIR=" + (dir / "sweep").string();
  const std::string tune_args =
      " --kernel rmsnorm --space " + (dir / "one.toml").string() +
      " --shape rows=1,hidden=4096 --shape rows=7,hidden=1024 --shape rows=64,hidden=3584"
      " --dtype f32,f16 --compile-only --arch sm_90 --compile-threads 1";
  EXPECT_EQ(run_shell("bash -n " + script), 0);
  for (int id : {1, 2, 3}) {  // sbatch --array=1-3
    const std::string cmd = "env " + env + " SLURM_ARRAY_TASK_ID=" + std::to_string(id) +
                            " SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_MIN=1 bash " + script + tune_args +
                            " > " + (dir / "task.log").string() + " 2>&1";
    ASSERT_EQ(run_shell(cmd), 0) << cmd;
    EXPECT_TRUE(std::filesystem::exists(dir / "sweep" / ("shard-" + std::to_string(id) + ".db")));
  }
  ASSERT_EQ(
      run_shell("env " + env + " bash " + script + " --merge > " + (dir / "merge.log").string() + " 2>&1"),
      0);
  std::multiset<std::string> keys;
  auto db = cache::ConfigCache::open(dir / "sweep" / "ktune.db", cache::ConfigCache::Mode::kReadOnly);
  db.for_each_measurement(
      {}, [&](const cache::StoredMeasurement& m) { keys.insert(m.m.shape + " " + to_string(m.m.dtype)); });
  EXPECT_EQ(keys.size(), 6u);
  EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()).size(), 6u) << "each key once";

  // Outside an array the task branch refuses, naming what is missing.
  EXPECT_NE(run_shell("env -u SLURM_ARRAY_TASK_ID " + env + " bash " + script + tune_args + " 2>/dev/null"),
            0);
}

}  // namespace slurm_script_e2e_test
}  // namespace ktune::testing
