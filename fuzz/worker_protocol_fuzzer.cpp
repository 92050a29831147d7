/// Fuzz target: the worker protocol's decoder (measure::FrameDecoder) and the message bodies the
/// parent and the worker decode (candidate requests with their attachment, candidate results).
/// The input is fed in two parts (split at its first byte's value) to exercise partial frames.
/// Framing errors are ktune::Error(kRuntime, api_code KTUNE_PROTOCOL_ERROR), documented so: the
/// parent kills the worker; malformed bodies are kBadInput.

#include <algorithm>
#include <string_view>

#include "fuzz_contract.hpp"
#include "measure/candidate.hpp"
#include "measure/worker_protocol.hpp"

namespace {

void decode_body(const ktune::measure::Message& m) {
  using ktune::measure::MessageType;
  switch (m.type) {
    case MessageType::kMeasure:
      (void)ktune::measure::candidate_request_from_json(m.body, &m.attachment);
      break;
    case MessageType::kResult:
      (void)ktune::measure::candidate_result_from_json(m.body);
      break;
    case MessageType::kHello:
    case MessageType::kShutdown:
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const size_t split = size == 0 ? 0 : std::min<size_t>(data[0], size);
  ktune::fuzz::expect_contract(
      "worker_protocol",
      [&] {
        ktune::measure::FrameDecoder decoder;
        decoder.feed(bytes.substr(0, split));
        while (auto m = decoder.next()) decode_body(*m);
        decoder.feed(bytes.substr(split));
        while (auto m = decoder.next()) decode_body(*m);
      },
      [](const ktune::Error& e) { return e.api_code() == ktune::measure::kProtocolErrorCode; });
  return 0;
}
