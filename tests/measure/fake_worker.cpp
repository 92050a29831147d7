// A stand-in for `ktune worker` that speaks the real protocol but misbehaves on request, so the
// parent's handling of crashes, hangs and garbage is tested without a GPU. Behaviour by candidate
// name: "ok..." answers with synthetic samples; "segv" raises SIGSEGV; "abort" aborts; "hang"
// sleeps forever; "garbage" writes bytes that are not a frame; "exit" exits with status 7;
// "wrong-id" answers for another candidate; "bad-body" sends a result frame whose body is not a
// result. Every answer echoes what arrived of the launch sequence under resources: "launches" (count),
// "functions" and "cubin_bytes" (per launch), "main_launch". Env FAKE_WORKER_HELLO: "nodevice" (hello with
// ok=false), "die" (exit before hello).
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>

#include "measure/candidate.hpp"
#include "measure/statistics.hpp"
#include "measure/worker_protocol.hpp"

using namespace ktune::measure;
using ktune::Outcome;

// Under ASan (the asan preset) the sanitizer's SEGV handler would catch the deliberate SIGSEGV below
// and exit with status 1; the parent must see the signal itself, as it does from a real worker. Only
// this stand-in opts out; a sanitized ktune worker keeps the handler.
extern "C" const char* __asan_default_options() { return "handle_segv=0"; }

int main(int argc, char** argv) {
  int fd = -1;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--fd") == 0) fd = std::atoi(argv[i + 1]);
  }
  if (fd < 0) return 2;
  const char* hello_mode = std::getenv("FAKE_WORKER_HELLO");
  const std::string mode = hello_mode ? hello_mode : "";
  if (mode == "die") {
    std::cerr << "fake worker: dying before hello\n";
    return 5;
  }
  nlohmann::json hello{{"version", kProtocolVersion}, {"pid", getpid()}, {"ok", mode != "nodevice"}};
  if (mode == "nodevice") {
    hello["error"] = "no CUDA device (fake)";
    hello["error_kind"] = 3;
  } else {
    hello["device"] = {{"name", "Fake GPU"}};
  }
  write_message(fd, {MessageType::kHello, hello});
  FrameDecoder decoder;
  for (;;) {
    auto m = read_message(fd, decoder);
    if (!m || m->type == MessageType::kShutdown) return 0;
    CandidateRequest req = candidate_request_from_json(m->body, &m->attachment);
    const std::string& n = req.name;
    std::cerr << "fake worker: running " << n << "\n";
    if (n == "segv") std::raise(SIGSEGV);
    if (n == "abort") std::abort();
    if (n == "exit") std::exit(7);
    if (n == "hang") {
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    if (n == "garbage") {
      const char junk[] = "this is not a frame \x01\x02\x03 at all";
      (void)!::write(fd, junk, sizeof junk);
      continue;
    }
    if (n == "bad-body") {
      write_message(fd, {MessageType::kResult, nlohmann::json{{"hello", "world"}}});
      continue;
    }
    CandidateResult res;
    res.id = n == "wrong-id" ? req.id + 1000 : req.id;
    res.name = n;
    res.outcome = Outcome::kOk;
    // Synthetic samples around a value encoded in the request (bytes_moved doubles as "true time").
    const double t = req.bytes_moved > 0 ? req.bytes_moved : 10.0;
    for (int i = 0; i < 20; ++i) res.samples_us.push_back(t * (1.0 + 0.001 * ((i * 7) % 5 - 2)));
    res.stats = summarize(res.samples_us);
    res.stop_reason = "converged";
    res.flush = "l2";
    res.rel_err = 0;
    res.max_abs_err = 0;
    nlohmann::json functions = nlohmann::json::array();
    nlohmann::json cubin_bytes = nlohmann::json::array();
    for (const LaunchSpec& l : req.launches) {
      functions.push_back(l.function);
      cubin_bytes.push_back(l.cubin.size());
    }
    res.resources = {{"launches", req.launches.size()},
                     {"functions", functions},
                     {"cubin_bytes", cubin_bytes},
                     {"main_launch", req.main_launch}};
    write_message(fd, {MessageType::kResult, to_json(res)});
  }
}
