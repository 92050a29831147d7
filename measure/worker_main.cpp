#include "measure/worker_main.hpp"

#include <unistd.h>

#include <cstdio>
#include <memory>

#include "ktune/error.hpp"
#include "measure/worker_measurer.hpp"
#include "measure/worker_protocol.hpp"

namespace ktune::measure {

int run_worker(int fd, int ordinal) {
  std::unique_ptr<WorkerMeasurer> measurer;
  nlohmann::json hello{{"version", kProtocolVersion}, {"pid", static_cast<int>(getpid())}};
  try {
    measurer = std::make_unique<WorkerMeasurer>(ordinal);
    hello["ok"] = true;
    hello["device"] = harness::to_json(measurer->device());
  } catch (const Error& e) {
    hello["ok"] = false;
    hello["error"] = e.what();
    hello["error_kind"] = static_cast<int>(e.kind());
  }
  try {
    write_message(fd, {MessageType::kHello, hello});
    if (!measurer) return 1;
    FrameDecoder decoder;
    for (;;) {
      auto m = read_message(fd, decoder);
      if (!m || m->type == MessageType::kShutdown) return 0;
      if (m->type != MessageType::kMeasure) {
        std::fprintf(stderr, "ktune worker: unexpected '%s' message\n",
                     std::string(to_string(m->type)).c_str());
        return 1;
      }
      CandidateRequest request = candidate_request_from_json(m->body, &m->attachment);
      bool context_ok = true;
      CandidateResult result = measurer->measure(request, &context_ok);
      nlohmann::json body = to_json(result);
      body["worker_ok"] = context_ok;
      write_message(fd, {MessageType::kResult, body});
      if (!context_ok) {
        std::fprintf(stderr, "ktune worker: context lost (%s); exiting\n", result.reason.c_str());
        std::_Exit(kWorkerContextLostExit);  // no teardown: the driver calls would fail on the lost context
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ktune worker: %s\n", e.what());
    return 1;
  }
}

}  // namespace ktune::measure
