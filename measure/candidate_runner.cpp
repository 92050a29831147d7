#include "measure/candidate_runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "ktune/error.hpp"
#include "measure/steady_clock.hpp"

namespace ktune::measure {

namespace {
std::string tail_note(const std::string& tail) {
  if (tail.empty()) return {};
  // The last non-empty lines of the worker's stderr: usually the abort message or driver error.
  std::string t = tail;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  constexpr std::size_t kKeep = 600;  // enough for an abort message; a reason stays one screen line-ish
  if (t.size() > kKeep) t = "..." + t.substr(t.size() - kKeep);
  return "; worker stderr: " + t;
}
}  // namespace

std::vector<std::string> default_worker_command() {
  for (const char* var : {"KTUNE_WORKER_BIN", "KTUNE_BIN"}) {
    if (const char* v = std::getenv(var); v && *v) return {v, "worker"};
  }
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return {ec ? std::string("ktune") : self.string(), "worker"};
}

CandidateRunner::CandidateRunner(RunnerOptions options) : options_(std::move(options)) {
  if (options_.worker_command.empty()) options_.worker_command = default_worker_command();
}

CandidateRunner::~CandidateRunner() { shutdown(); }

int CandidateRunner::worker_pid() const { return worker_ ? static_cast<int>(worker_->pid()) : 0; }

void CandidateRunner::shutdown() noexcept {
  if (!worker_) return;
  try {
    worker_->send({MessageType::kShutdown, nlohmann::json::object()});
    // Grace period for a clean exit (context teardown is ~10 ms); then SIGKILL.
    for (int i = 0; i < 50 && !worker_->exited(); ++i) usleep(10000);
  } catch (...) {  // the worker is already gone: nothing to say
  }
  worker_.reset();
}

void CandidateRunner::ensure_worker() {
  if (worker_ && !worker_->exited()) return;
  worker_.reset();
  std::string last_failure;
  for (int attempt = 0; attempt < options_.max_start_failures; ++attempt) {
    auto w = WorkerProcess::spawn(options_.worker_command);
    ++workers_started_;
    auto got = w->receive(options_.start_timeout_ms);
    if (got.status == WorkerProcess::Status::kMessage && got.message.type == MessageType::kHello) {
      const auto& body = got.message.body;
      if (!body.value("ok", false)) {
        const auto kind =
            static_cast<ErrorKind>(body.value("error_kind", static_cast<int>(ErrorKind::kRuntime)));
        throw Error(kind, fmt::format("worker cannot measure: {}", body.value("error", std::string("?"))));
      }
      device_ = body.value("device", nlohmann::json::object());
      worker_ = std::move(w);
      return;
    }
    switch (got.status) {
      case WorkerProcess::Status::kTimeout:
        last_failure = fmt::format("no hello within {} ms", options_.start_timeout_ms);
        break;
      case WorkerProcess::Status::kExited:
        last_failure = fmt::format("worker {} before its hello", w->exit_description());
        break;
      case WorkerProcess::Status::kProtocolError:
        last_failure = got.error;
        break;
      case WorkerProcess::Status::kMessage:
        last_failure = fmt::format("first message was '{}', not hello", to_string(got.message.type));
        break;
    }
    w->kill();
    last_failure += tail_note(w->stderr_tail());
  }
  throw Error(ErrorKind::kRuntime, fmt::format("cannot start a worker ({} attempts, command '{}'): {}",
                                               options_.max_start_failures,
                                               fmt::join(options_.worker_command, " "), last_failure));
}

CandidateResult CandidateRunner::failed(const CandidateRequest& request, Outcome outcome,
                                        std::string reason) const {
  CandidateResult r;
  r.id = request.id;
  r.name = request.name;
  r.outcome = outcome;
  r.reason = std::move(reason);
  return r;
}

WorkerProcess::Received CandidateRunner::receive_result(double timeout_ms, bool& interrupted) {
  if (options_.stop == nullptr) return worker_->receive(timeout_ms);
  // Wait in slices so that a stop request is seen within kSlice of being made.
  constexpr double kSliceMs = 50;
  const double deadline = now_ms() + timeout_ms;
  double stop_deadline = -1;
  for (;;) {
    const double now = now_ms();
    if (stop_deadline < 0 && options_.stop->load()) stop_deadline = now + options_.stop_grace_ms;
    if (stop_deadline >= 0 && now >= stop_deadline) {
      interrupted = true;
      return {};
    }
    double until = deadline;
    if (stop_deadline >= 0) until = std::min(until, stop_deadline);
    auto got = worker_->receive(std::max(0.0, std::min(kSliceMs, until - now)));
    if (got.status != WorkerProcess::Status::kTimeout || now_ms() >= deadline) return got;
  }
}

CandidateResult CandidateRunner::run(const CandidateRequest& request) {
  const double t0 = now_ms();
  ensure_worker();
  const int pid = static_cast<int>(worker_->pid());
  auto finish = [&](CandidateResult r) {
    r.wall_ms = now_ms() - t0;
    r.worker_pid = pid;
    return r;
  };
  try {
    Message m{MessageType::kMeasure, {}, {}};
    m.body = to_json(request, &m.attachment);
    worker_->send(m);
  } catch (const Error& e) {
    worker_->kill();
    auto r = failed(
        request, Outcome::kCrashed,
        fmt::format("worker {} before the candidate was sent ({})", worker_->exit_description(), e.what()) +
            tail_note(worker_->stderr_tail()));
    worker_.reset();
    return finish(std::move(r));
  }
  const double timeout = request.timing.candidate_timeout_ms;
  bool interrupted = false;
  auto got = receive_result(timeout, interrupted);
  CandidateResult r;
  if (interrupted) {
    worker_->kill();
    worker_.reset();
    r = failed(request, Outcome::kSkipped,
               fmt::format("interrupted: the sweep was stopped and the candidate had no result within {} ms; "
                           "worker pid {} killed",
                           options_.stop_grace_ms, pid));
    r.interrupted = true;
    return finish(std::move(r));
  }
  switch (got.status) {
    case WorkerProcess::Status::kMessage: {
      if (got.message.type != MessageType::kResult) {
        r = failed(
            request, Outcome::kLaunchError,
            fmt::format("worker protocol error: expected a result, got '{}'", to_string(got.message.type)));
        break;
      }
      try {
        r = candidate_result_from_json(got.message.body);
      } catch (const Error& e) {
        r = failed(request, Outcome::kLaunchError, fmt::format("worker protocol error: {}", e.what()));
        break;
      }
      if (r.id != request.id) {
        r = failed(request, Outcome::kLaunchError,
                   fmt::format("worker protocol error: result for candidate {} while {} was asked", r.id,
                               request.id));
        break;
      }
      // A worker whose context is lost (sticky CUDA error) says so and exits: never reuse it.
      if (!got.message.body.value("worker_ok", true)) worker_->kill();
      return finish(std::move(r));
    }
    case WorkerProcess::Status::kTimeout:
      worker_->kill();
      r = failed(request, Outcome::kTimeout,
                 fmt::format("no result within {} ms; worker pid {} killed", timeout, pid));
      break;
    case WorkerProcess::Status::kExited:
      r = failed(request, Outcome::kCrashed,
                 fmt::format("worker {} while running the candidate", worker_->exit_description()) +
                     tail_note(worker_->stderr_tail()));
      break;
    case WorkerProcess::Status::kProtocolError:
      r = failed(request, Outcome::kLaunchError, got.error + tail_note(worker_->stderr_tail()));
      break;
  }
  worker_->kill();
  worker_.reset();
  return finish(std::move(r));
}

}  // namespace ktune::measure
