/// Load benchmark of `ktune serve` (docs/perf/service.md). Sends GET /v1/best for a set of keys from
/// C keep-alive clients for a fixed time and reports lookups/s, p50/p99/max latency and errors; then
/// makes the same lookups through the C ABI (ktune_lookup) on one thread, for the ratio.
///
///   ktune_serve_load --url http://127.0.0.1:8787 --db DB --gpu NAME --key KERNEL SHAPE DTYPE LAYOUT ...
///                    [--clients 1,16,64] [--seconds 5] [--rate R]
///
/// Closed loop (the default): each client sends its next request when the last one is answered, so
/// the rate is whatever the server sustains, and by Little's law the mean latency is clients / rate.
/// Open loop (--rate R): each client sends on a fixed schedule, R / clients a second, its sends spread
/// evenly between the clients' (client c starts c / R seconds in), whatever the answers do. Latency
/// is measured from the scheduled send time, not from the moment the request actually left, so a
/// server that falls behind is charged for the wait of every request it delayed (no coordinated
/// omission). Each client connects and makes one untimed request before the schedule starts.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <httplib.h>

#include "ktune/ktune.h"

namespace {

struct Key {
  std::string kernel, shape, dtype, layout;
};

struct Args {
  std::string url = "http://127.0.0.1:8787";
  std::string db;
  std::string gpu;
  std::vector<Key> keys;
  std::vector<int> clients = {1, 16, 64};
  double seconds = 5;
  double rate = 0;  ///< lookups/s offered in all (open loop); 0: closed loop
};

std::string encode(const std::string& v) {
  std::string out;
  for (const unsigned char c : v) {
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '=' || c == ',')
      out += static_cast<char>(c);
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

struct Result {
  uint64_t ok = 0;
  uint64_t errors = 0;
  std::vector<double> latencies_us;
  double seconds = 0;  ///< from the first send to the last answer
};

std::vector<std::string> lookup_targets(const Args& a) {
  std::vector<std::string> targets;
  for (const Key& k : a.keys) {
    targets.push_back(fmt::format("/v1/best?gpu={}&kernel={}&shape={}&dtype={}&layout={}", encode(a.gpu),
                                  encode(k.kernel), encode(k.shape), encode(k.dtype), encode(k.layout)));
  }
  return targets;
}

Result merged(std::vector<Result>& per) {
  Result all;
  for (auto& r : per) {
    all.ok += r.ok;
    all.errors += r.errors;
    all.latencies_us.insert(all.latencies_us.end(), r.latencies_us.begin(), r.latencies_us.end());
  }
  std::sort(all.latencies_us.begin(), all.latencies_us.end());
  return all;
}

/// Open loop: `clients` keep-alive clients send on a fixed schedule, a.rate lookups/s in all, for
/// a.seconds; latency from each request's scheduled time.
Result run_open_loop(const Args& a, int clients) {
  using Clock = std::chrono::steady_clock;
  const std::vector<std::string> targets = lookup_targets(a);
  const auto interval = std::chrono::duration<double>(static_cast<double>(clients) / a.rate);
  // Time for every client to connect and make its untimed first request.
  const Clock::time_point start = Clock::now() + std::chrono::seconds(1);
  const Clock::time_point end =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(a.seconds));
  std::vector<Result> per(static_cast<size_t>(clients));
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client client(a.url);
      client.set_keep_alive(true);
      Result& r = per[static_cast<size_t>(c)];
      size_t i = static_cast<size_t>(c);
      if (auto warm = client.Get(targets[i % targets.size()]); !warm || warm->status != 200) ++r.errors;
      r.latencies_us.reserve(static_cast<size_t>(a.seconds / interval.count()) + 16);
      const auto offset = interval * (static_cast<double>(c) / static_cast<double>(clients));
      for (uint64_t k = 0;; ++k) {
        const Clock::time_point due =
            start + std::chrono::duration_cast<Clock::duration>(offset + interval * static_cast<double>(k));
        if (due >= end) break;
        std::this_thread::sleep_until(due);
        auto res = client.Get(targets[i++ % targets.size()]);
        const auto done = Clock::now();
        if (res && res->status == 200) {
          ++r.ok;
          r.latencies_us.push_back(std::chrono::duration<double, std::micro>(done - due).count());
        } else {
          ++r.errors;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  Result all = merged(per);
  // A server that fell behind answers the last scheduled requests after the schedule ended: the
  // rate it achieved is over the whole time it took.
  all.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return all;
}

Result run_clients(const Args& a, int clients) {
  const std::vector<std::string> targets = lookup_targets(a);
  std::vector<Result> per(static_cast<size_t>(clients));
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client client(a.url);
      client.set_keep_alive(true);
      Result& r = per[static_cast<size_t>(c)];
      r.latencies_us.reserve(200000);
      size_t i = static_cast<size_t>(c);
      while (!stop.load(std::memory_order_relaxed)) {
        const auto t0 = std::chrono::steady_clock::now();
        auto res = client.Get(targets[i++ % targets.size()]);
        const auto t1 = std::chrono::steady_clock::now();
        if (res && res->status == 200) {
          ++r.ok;
          r.latencies_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        } else {
          ++r.errors;
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(a.seconds));
  stop = true;
  for (auto& t : threads) t.join();
  Result all = merged(per);
  all.seconds = a.seconds;
  return all;
}

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  return sorted[std::min(sorted.size() - 1, static_cast<size_t>(p * static_cast<double>(sorted.size())))];
}

int run_capi(const Args& a) {
  ktune_db* db = nullptr;
  if (ktune_open(a.db.c_str(), &db) != KTUNE_OK) {
    std::fprintf(stderr, "ktune_open: %s\n", ktune_last_error());
    return 1;
  }
  uint64_t n = 0;
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::duration<double>(a.seconds);
  while (std::chrono::steady_clock::now() < end) {
    const Key& k = a.keys[n % a.keys.size()];
    char* json = nullptr;
    if (ktune_lookup(db, a.gpu.c_str(), k.kernel.c_str(), k.shape.c_str(), k.dtype.c_str(), k.layout.c_str(),
                     1, &json) != KTUNE_OK) {
      std::fprintf(stderr, "ktune_lookup: %s\n", ktune_last_error());
      return 1;
    }
    ktune_free_string(json);
    ++n;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("C ABI, 1 thread: {:.0f} lookups/s ({:.2f} us each)\n", static_cast<double>(n) / s,
             s * 1e6 / static_cast<double>(n));
  ktune_close(db);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--url") {
      a.url = next();
    } else if (arg == "--db") {
      a.db = next();
    } else if (arg == "--gpu") {
      a.gpu = next();
    } else if (arg == "--rate") {
      a.rate = std::stod(next());
      if (!(a.rate > 0)) {
        std::fprintf(stderr, "--rate must be a positive number of lookups a second\n");
        return 2;
      }
    } else if (arg == "--seconds") {
      a.seconds = std::stod(next());
    } else if (arg == "--clients") {
      a.clients.clear();
      std::string list = next();
      for (size_t p = 0; p < list.size();) {
        const size_t comma = list.find(',', p);
        a.clients.push_back(std::stoi(list.substr(p, comma - p)));
        p = comma == std::string::npos ? list.size() : comma + 1;
      }
    } else if (arg == "--key") {
      Key k;
      k.kernel = next();
      k.shape = next();
      k.dtype = next();
      k.layout = next();
      a.keys.push_back(k);
    } else {
      std::fprintf(stderr, "unknown argument %s (see the comment at the top of serve_load.cpp)\n",
                   arg.c_str());
      return 2;
    }
  }
  if (a.keys.empty() || a.gpu.empty()) {
    std::fprintf(stderr, "give --gpu NAME and at least one --key KERNEL SHAPE DTYPE LAYOUT\n");
    return 2;
  }
  if (a.rate > 0)
    fmt::print("open loop, {:.0f} lookups/s offered; latency from the scheduled send time\n", a.rate);
  fmt::print("{:>8} {:>12} {:>10} {:>10} {:>10} {:>10} {:>8}\n", "clients", "lookups/s", "p50 us", "p99 us",
             "p99.9 us", "max us", "errors");
  for (const int c : a.clients) {
    const Result r = a.rate > 0 ? run_open_loop(a, c) : run_clients(a, c);
    fmt::print("{:>8} {:>12.0f} {:>10.0f} {:>10.0f} {:>10.0f} {:>10.0f} {:>8}\n", c,
               static_cast<double>(r.ok) / r.seconds, percentile(r.latencies_us, 0.5),
               percentile(r.latencies_us, 0.99), percentile(r.latencies_us, 0.999),
               r.latencies_us.empty() ? 0.0 : r.latencies_us.back(), r.errors);
  }
  return a.db.empty() ? 0 : run_capi(a);
}
