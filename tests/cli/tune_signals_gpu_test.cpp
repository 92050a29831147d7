// `ktune tune` on a GPU stopped mid-sweep: SIGTERM lets the running candidate finish, commits,
// exits 143 and leaves no worker process; SIGKILL (nothing can be caught) still leaves no worker
// (PR_SET_PDEATHSIG); the stopped sweep resumes without measuring a committed config again. Skips
// without a GPU. On the GPU machine: KTUNE_BIN=<ktune> ktune_tune_signals_gpu_tests.

#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "tests/cli/ktune_runner.hpp"
#include "tests/cli/test_db_fixture.hpp"

namespace ktune::testing {
namespace {

using Clock = std::chrono::steady_clock;

std::string no_gpu_reason() {
  const RunResult r = run_ktune({"devices", "--json"});
  if (r.exit_code == 0 && nlohmann::json::parse(r.out).value("count", 0) > 0) return "";
  return r.err.empty() ? "no device listed" : r.err;
}

/// Field `index` (1-based, after the command) of /proc/PID/stat; "" when the process is gone.
std::string stat_field(int pid, int index) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close == std::string::npos) return "";
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  for (int i = 0; i < index && rest >> field; ++i) {
  }
  return field;
}

/// The live children of `parent` (zombies excluded).
std::set<int> children_of(int parent) {
  std::set<int> out;
  DIR* d = ::opendir("/proc");
  while (dirent* e = d != nullptr ? ::readdir(d) : nullptr) {
    const int pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    if (stat_field(pid, 2) == std::to_string(parent) && stat_field(pid, 1) != "Z") out.insert(pid);
  }
  if (d != nullptr) ::closedir(d);
  return out;
}

bool alive(int pid) {
  const std::string state = stat_field(pid, 1);
  return !state.empty() && state != "Z" && state != "X";
}

size_t rows_now(const std::string& db_path) {
  if (!std::filesystem::exists(db_path)) return 0;
  try {
    size_t n = 0;
    auto db = cache::ConfigCache::open(db_path, cache::ConfigCache::Mode::kReadOnly);
    db.for_each_measurement({}, [&](const cache::StoredMeasurement&) { ++n; });
    return n;
  } catch (const std::exception&) {
    return 0;
  }
}

std::vector<std::string> sweep_args(const std::string& db) {
  return {"tune",    "--kernel",      "gemm",       "--shape",    "m=64,n=4096,k=4096",
          "--dtype", "bf16",          "--strategy", "exhaustive", "--budget",
          "400",     "--no-counters", "--db",       db,           "--json"};
}

/// Starts the sweep and waits until `rows` measurements are committed; returns the worker pids seen.
std::set<int> run_until(KtuneProcess& p, const std::string& db, size_t rows) {
  std::set<int> workers;
  const auto deadline = Clock::now() + std::chrono::seconds(240);
  while (rows_now(db) < rows && !p.exited() && Clock::now() < deadline) {
    for (int w : children_of(p.pid())) workers.insert(w);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (int w : children_of(p.pid())) workers.insert(w);
  return workers;
}

TEST(TuneSignalsGpu, SigtermFinishesTheCandidateCommitsExits143AndLeavesNoWorker) {
  const std::string why = no_gpu_reason();
  if (!why.empty()) GTEST_SKIP() << "needs a GPU: " << why;
  TempDir dir;
  const std::string db = (dir / "sigterm.db").string();
  KtuneProcess sweep(sweep_args(db));
  const std::set<int> workers = run_until(sweep, db, 20);
  ASSERT_FALSE(sweep.exited()) << sweep.wait().err;
  ASSERT_FALSE(workers.empty()) << "no worker process seen";
  const auto t0 = Clock::now();
  sweep.signal(SIGTERM);
  const RunResult r = sweep.wait();
  const double exit_s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::vector<int> left;
  for (int w : workers)
    if (alive(w)) left.push_back(w);
  std::cout << "SIGTERM to exit: " << exit_s << " s; workers seen " << workers.size() << ", alive after "
            << left.size() << "\n";
  EXPECT_EQ(r.exit_code, 143) << r.err;
  EXPECT_TRUE(left.empty()) << "a worker outlived the sweep";
  EXPECT_LT(exit_s, 15) << "one candidate (under the 10 s grace) and a commit";
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc.at("stopped").at("signal"), "SIGTERM");
  const size_t committed = rows_now(db);
  const auto verify = run_ktune({"cache", "verify", "--db", db});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;

  // Resume with a budget just past what was committed: the committed rows are answered from the
  // database, a few new configs are measured, and the key gets its winner.
  std::vector<std::string> args = sweep_args(db);
  args[std::find(args.begin(), args.end(), "--budget") - args.begin() + 1] = std::to_string(committed + 4);
  const RunResult resumed = run_ktune(args);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const auto key = nlohmann::json::parse(resumed.out).at("keys").at(0);
  EXPECT_EQ(key.at("from_cache"), committed) << key.dump();
  // The 4 new configs of the search, then cuBLASLt's algorithms (measured after the search, which
  // the stopped run never reached: docs/config-spaces.md, library algorithms).
  EXPECT_EQ(key.at("measured"), 4 + key.at("library_candidates").get<size_t>()) << key.dump();
  EXPECT_FALSE(key.at("winner").is_null()) << key.dump();
}

TEST(TuneSignalsGpu, SigkillLeavesNoWorker) {
  const std::string why = no_gpu_reason();
  if (!why.empty()) GTEST_SKIP() << "needs a GPU: " << why;
  TempDir dir;
  const std::string db = (dir / "sigkill.db").string();
  KtuneProcess sweep(sweep_args(db));
  const std::set<int> workers = run_until(sweep, db, 5);
  ASSERT_FALSE(sweep.exited()) << sweep.wait().err;
  ASSERT_FALSE(workers.empty());
  sweep.signal(SIGKILL);
  EXPECT_EQ(sweep.wait().exit_code, 128 + SIGKILL);
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  std::vector<int> left;
  do {
    left.clear();
    for (int w : workers)
      if (alive(w)) left.push_back(w);
    if (!left.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (!left.empty() && Clock::now() < deadline);
  EXPECT_TRUE(left.empty()) << "a worker outlived its SIGKILLed parent";
  for (int w : left) ::kill(w, SIGKILL);
  const auto verify = run_ktune({"cache", "verify", "--db", db});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

}  // namespace
}  // namespace ktune::testing
