// Frames and messages of the worker protocol: round trips, byte-at-a-time delivery, and garbage.
#include "measure/worker_protocol.hpp"

#include <gtest/gtest.h>

#include "ktune/error.hpp"
#include "measure/candidate.hpp"

namespace ktune::measure {
namespace {

std::string protocol_error_of(std::string bytes) {
  FrameDecoder d;
  d.feed(bytes);
  try {
    d.next();
  } catch (const Error& e) {
    EXPECT_EQ(e.api_code(), kProtocolErrorCode);
    return e.what();
  }
  return "";
}

CandidateRequest sample_request() {
  CandidateRequest r;
  r.id = 42;
  r.name = "copy.f32.u4.b256";
  r.device = 1;
  r.buffers = {{"src", DType::kBF16, 1000, BufferSpec::Init::kFill, BufferFill::random(2.0)},
               {"dst", DType::kBF16, 1000, BufferSpec::Init::kPoison}};
  LaunchSpec& copy = r.launches.emplace_back();
  copy.cubin = std::string(
      "\x7f"
      "ELF\0\x01\xff binary",
      15);
  copy.function = "_Z4copyILi4EEvPK5uint4PS0_y";
  copy.grid = {7, 2, 1};
  copy.block = {256, 1, 1};
  copy.shared_bytes = 1024;
  copy.args = {KernelArg::buf("src"), KernelArg::buf("dst"), KernelArg::u64(1ULL << 40), KernelArg::f32(0.5f),
               KernelArg::i32(-3)};
  r.checks = {{"dst", "src"}};
  r.timing.flush = FlushMode::kRotate;
  r.timing.max_samples = 77;
  r.timing.metrics = {"dram__bytes_read.sum"};
  r.bytes_moved = 4000;
  return r;
}

TEST(WorkerProtocol, FrameRoundTripByteAtATime) {
  Message in{MessageType::kMeasure, {}, {}};
  in.body = to_json(sample_request(), &in.attachment);
  EXPECT_EQ(in.attachment, sample_request().launches[0].cubin);  // the cubin travels raw
  const std::string frame =
      encode_frame(in) + encode_frame({MessageType::kShutdown, nlohmann::json::object()});
  FrameDecoder d;
  std::vector<Message> got;
  for (char c : frame) {
    d.feed(std::string_view(&c, 1));
    while (auto m = d.next()) got.push_back(std::move(*m));
  }
  ASSERT_EQ(got.size(), 2U);
  EXPECT_EQ(got[0].type, MessageType::kMeasure);
  EXPECT_EQ(got[1].type, MessageType::kShutdown);
  EXPECT_EQ(d.pending(), 0U);
  const CandidateRequest out = candidate_request_from_json(got[0].body, &got[0].attachment);
  const CandidateRequest ref = sample_request();
  ASSERT_EQ(out.launches.size(), 1U);
  const LaunchSpec& k = out.launches[0];
  EXPECT_EQ(k.cubin, ref.launches[0].cubin);  // binary with NUL and 0xff survives
  EXPECT_EQ(k.args.size(), 5U);
  EXPECT_EQ(static_cast<uint64_t>(k.args[2].i), 1ULL << 40);
  EXPECT_EQ(k.args[3].f, 0.5);
  EXPECT_EQ(k.args[4].i, -3);
  EXPECT_EQ(out.buffers[0].dtype, DType::kBF16);
  EXPECT_EQ(out.buffers[1].init, BufferSpec::Init::kPoison);
  EXPECT_EQ(out.timing.flush, FlushMode::kRotate);
  EXPECT_EQ(out.timing.max_samples, 77);
  EXPECT_EQ(k.grid[1], 2U);
  EXPECT_EQ(out.checks[0].reference, "src");
}

TEST(WorkerProtocol, EveryFillIntegerTypeAndAbsoluteBoundTravels) {
  CandidateRequest r = sample_request();
  r.buffers = {
      {"table", DType::kF16, 300, BufferSpec::Init::kFill, BufferFill::repeat({1.5, -0.25, 3})},
      {"noise", DType::kF32, 40, BufferSpec::Init::kFill, BufferFill::range(-2.5, 3.75)},
      {"rows", DType::kF32, 70, BufferSpec::Init::kFill, BufferFill::sequence(-5, 3, 11), IntType::kI32},
      {"ids", DType::kF32, 70, BufferSpec::Init::kFill, BufferFill::range(0, 99), IntType::kI64},
      {"out", DType::kF32, 70, BufferSpec::Init::kPoison, {}, IntType::kU8}};
  r.checks = {{"out", "ids", 0, 3.0}, {"table", "noise", 1e-2, std::nullopt}};
  const CandidateRequest back = candidate_request_from_json(to_json(r));
  ASSERT_EQ(back.buffers.size(), 5U);
  EXPECT_EQ(back.buffers[0].fill.kind, BufferFill::Kind::kPattern);
  EXPECT_EQ(back.buffers[0].fill.pattern, (std::vector<double>{1.5, -0.25, 3}));
  EXPECT_EQ(back.buffers[0].integer, std::nullopt);
  EXPECT_EQ(back.buffers[1].fill.kind, BufferFill::Kind::kRange);
  EXPECT_EQ(back.buffers[1].fill.min, -2.5);
  EXPECT_EQ(back.buffers[1].fill.max, 3.75);
  EXPECT_EQ(back.buffers[2].fill.kind, BufferFill::Kind::kSequence);
  EXPECT_EQ(back.buffers[2].fill.start, -5);
  EXPECT_EQ(back.buffers[2].fill.step, 3);
  EXPECT_EQ(back.buffers[2].fill.modulo, 11);
  EXPECT_EQ(back.buffers[2].integer, IntType::kI32);
  EXPECT_EQ(back.buffers[2].bytes(), 280U);
  EXPECT_EQ(back.buffers[3].integer, IntType::kI64);
  EXPECT_EQ(back.buffers[3].bytes(), 560U);
  EXPECT_EQ(back.buffers[4].integer, IntType::kU8);
  EXPECT_EQ(back.buffers[4].bytes(), 70U);
  EXPECT_EQ(back.checks[0].abs, 3.0);
  EXPECT_EQ(back.checks[1].abs, std::nullopt);
  EXPECT_EQ(back.checks[1].rel_l2, 1e-2);
  // A sequence without a modulo stays without one.
  r.buffers[2].fill = BufferFill::sequence(1, 2, std::nullopt);
  EXPECT_EQ(candidate_request_from_json(to_json(r)).buffers[2].fill.modulo, std::nullopt);
}

TEST(WorkerProtocol, ResultRoundTrip) {
  CandidateResult r;
  r.id = 9;
  r.name = "x";
  r.outcome = Outcome::kIncorrect;
  r.reason = "relative error 0.5 > 1e-4";
  r.samples_us = {1.5, 2.5, 3.5};
  r.stats = summarize(r.samples_us);
  r.sm_clock_mhz = 1980;
  r.counters = {{"available", false}, {"reason", "CUPTI missing"}};
  const CandidateResult back = candidate_result_from_json(to_json(r));
  EXPECT_EQ(back.outcome, Outcome::kIncorrect);
  EXPECT_EQ(back.reason, r.reason);
  ASSERT_TRUE(back.stats);
  EXPECT_DOUBLE_EQ(back.stats->median, 2.5);
  EXPECT_EQ(back.sm_clock_mhz, 1980);
  EXPECT_FALSE(back.temperature_c);
  EXPECT_EQ(back.counters.at("reason"), "CUPTI missing");
}

TEST(WorkerProtocol, GarbageIsAClearProtocolError) {
  EXPECT_NE(protocol_error_of("hello world, not a frame").find("bad magic"), std::string::npos);
  EXPECT_NE(protocol_error_of("XY").find("bad magic"), std::string::npos);  // wrong from the first byte
}

TEST(WorkerProtocol, WrongVersionUnknownTypeOversizeAndBadBodyAreRejected) {
  const std::string good = encode_frame({MessageType::kHello, nlohmann::json{{"ok", true}}});
  EXPECT_NE(protocol_error_of(encode_frame({MessageType::kHello, {}}, 99)).find("protocol version 99"),
            std::string::npos);
  std::string bad_type = good;
  bad_type[6] = 77;
  EXPECT_NE(protocol_error_of(bad_type).find("unknown message type 77"), std::string::npos);
  std::string huge = good;
  huge[11] = '\x7f';
  EXPECT_NE(protocol_error_of(huge).find("exceeds"), std::string::npos);
  std::string not_cbor = good.substr(0, 16);
  not_cbor[8] = 3;
  not_cbor[9] = not_cbor[10] = not_cbor[11] = 0;
  not_cbor[12] = not_cbor[13] = not_cbor[14] = not_cbor[15] = 0;
  not_cbor += "\xff\xff\xff";
  EXPECT_NE(protocol_error_of(not_cbor).find("not CBOR"), std::string::npos);
}

TEST(WorkerProtocol, EmbeddedAndAttachedCubinsAgreeAndBadSlicesAreRejected) {
  const CandidateRequest r = sample_request();
  EXPECT_EQ(candidate_request_from_json(to_json(r)).launches.at(0).cubin,
            r.launches[0].cubin);  // CBOR byte string
  std::string attachment;
  const nlohmann::json j = to_json(r, &attachment);
  std::string short_attachment = attachment.substr(0, 3);
  EXPECT_THROW(candidate_request_from_json(j, &short_attachment), Error);
  EXPECT_THROW(candidate_request_from_json(j, nullptr), Error);
  std::string huge_attachment = encode_frame({MessageType::kHello, nlohmann::json::object(), {}});
  huge_attachment[15] = '\x7f';
  EXPECT_NE(protocol_error_of(huge_attachment).find("attachment length"), std::string::npos);
}

TEST(WorkerProtocol, MalformedRequestBodyIsBadInput) {
  nlohmann::json j = to_json(sample_request());
  j.erase("launches");
  try {
    candidate_request_from_json(j);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    EXPECT_NE(std::string(e.what()).find("launches"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ktune::measure
