// A candidate that is a sequence of launches (split-K: zeroing, GEMM, reduction) over the worker
// protocol: every launch and every cubin arrives intact, a cubin shared by several launches travels
// once, and a malformed sequence is bad input. Cubins are random bytes (NUL and 0xff included).
#include <random>

#include <gtest/gtest.h>

#include "ktune/error.hpp"
#include "measure/candidate.hpp"
#include "measure/worker_protocol.hpp"

namespace ktune::measure {
namespace {

struct Rng {
  std::mt19937_64 gen{std::random_device{}()};
  uint32_t between(uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(gen); }
  std::string bytes(std::size_t n) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(between(0, 255));
    return s;
  }
};

LaunchSpec random_launch(Rng& rng, const std::string& cubin, std::string function) {
  LaunchSpec l;
  l.cubin = cubin;
  l.function = std::move(function);
  l.grid = {rng.between(1, 4096), rng.between(1, 64), rng.between(1, 16)};
  l.block = {32 * rng.between(1, 32), 1, 1};
  l.shared_bytes = rng.between(1, 200 * 1024);
  l.args = {
      KernelArg::buf("workspace"), KernelArg::i64(-static_cast<int64_t>(rng.between(1, 1U << 30))),
      KernelArg::f32(static_cast<float>(rng.between(1, 1000)) / 8.0F), KernelArg::u32(rng.between(1, 9)),
      KernelArg::tensor_map("a", rng.between(0, 1) ? DType::kBF16 : DType::kF16, rng.between(1, 1U << 20),
                            8 * rng.between(1, 4096), rng.between(1, 256), 64)};
  return l;
}

/// zero (cubin A), GEMM (cubin B), reduction (cubin B); reference from cubin C.
CandidateRequest split_k_request(Rng& rng, const std::string& a, const std::string& b, const std::string& c) {
  CandidateRequest r;
  r.id = rng.between(1, 1U << 30);
  r.name = "gemm.bf16.nt.mma.64x128x32.w2x2.s3.sk4.a1.g8";
  r.buffers = {
      {"a", DType::kBF16, rng.between(1, 1U << 20), BufferSpec::Init::kFill, BufferFill::random(1.0)},
      {"workspace", DType::kF32, rng.between(1, 1U << 20), BufferSpec::Init::kPoison}};
  r.launches = {random_launch(rng, a, "_Z4zeroIfEvPT_x"), random_launch(rng, b, "_Z4gemmILi64EEvv"),
                random_launch(rng, b, "_Z6reduceI13__nv_bfloat16EvPKfPT_xi")};
  r.main_launch = 1;
  r.reference = random_launch(rng, c, "_Z3refv");
  r.checks = {{"c", "c_ref"}};
  return r;
}

void expect_same(const LaunchSpec& got, const LaunchSpec& want) {
  EXPECT_EQ(got.cubin, want.cubin);
  EXPECT_EQ(got.function, want.function);
  EXPECT_EQ(got.grid, want.grid);
  EXPECT_EQ(got.block, want.block);
  EXPECT_EQ(got.shared_bytes, want.shared_bytes);
  ASSERT_EQ(got.args.size(), want.args.size());
  for (std::size_t i = 0; i < got.args.size(); ++i) {
    EXPECT_EQ(got.args[i].kind, want.args[i].kind);
    EXPECT_EQ(got.args[i].buffer, want.args[i].buffer);
    EXPECT_EQ(got.args[i].i, want.args[i].i);
    EXPECT_EQ(got.args[i].f, want.args[i].f);
    EXPECT_EQ(got.args[i].map, want.args[i].map);
    EXPECT_EQ(got.args[i].map_dtype, want.args[i].map_dtype);
  }
}

void expect_same(const CandidateRequest& got, const CandidateRequest& want) {
  EXPECT_EQ(got.id, want.id);
  EXPECT_EQ(got.main_launch, want.main_launch);
  ASSERT_EQ(got.launches.size(), want.launches.size());
  for (std::size_t i = 0; i < got.launches.size(); ++i) {
    SCOPED_TRACE("launch " + std::to_string(i));
    expect_same(got.launches[i], want.launches[i]);
  }
  ASSERT_TRUE(got.reference.has_value());
  expect_same(*got.reference, *want.reference);
}

TEST(LaunchSequenceProtocol, ThreeLaunchesAndThreeCubinsSurviveAFrameInRandomPieces) {
  Rng rng;
  const std::string a = rng.bytes(rng.between(100, 5000));
  const std::string b = rng.bytes(rng.between(100, 50000));
  const std::string c = rng.bytes(rng.between(100, 5000));
  const CandidateRequest want = split_k_request(rng, a, b, c);

  Message out{MessageType::kMeasure, {}, {}};
  out.body = to_json(want, &out.attachment);
  // A, B and C once each: the reduction's cubin is the GEMM's, sliced twice.
  EXPECT_EQ(out.attachment.size(), a.size() + b.size() + c.size());
  EXPECT_EQ(out.body.at("launches").at(1).at("cubin"), out.body.at("launches").at(2).at("cubin"));

  const std::string frame = encode_frame(out);
  FrameDecoder d;
  std::optional<Message> got;
  for (std::size_t at = 0; at < frame.size();) {
    const std::size_t n = std::min<std::size_t>(rng.between(1, 4096), frame.size() - at);
    d.feed(std::string_view(frame).substr(at, n));
    at += n;
    if (auto m = d.next()) got = std::move(m);
  }
  ASSERT_TRUE(got.has_value());
  expect_same(candidate_request_from_json(got->body, &got->attachment), want);
}

TEST(LaunchSequenceProtocol, EmbeddedCubinFormCarriesEveryLaunch) {
  Rng rng;
  const CandidateRequest want =
      split_k_request(rng, rng.bytes(rng.between(1, 999)), rng.bytes(rng.between(1, 999)), rng.bytes(17));
  expect_same(candidate_request_from_json(nlohmann::json::from_cbor(nlohmann::json::to_cbor(to_json(want)))),
              want);
}

TEST(LaunchSequenceProtocol, TwoLaunchesOfEqualCubinsFromSeparateCopiesShareOneSlice) {
  Rng rng;
  const std::string cubin = rng.bytes(rng.between(10, 3000));
  CandidateRequest r;
  r.launches = {random_launch(rng, cubin, "_Z4gemmv"), random_launch(rng, std::string(cubin), "_Z6reducev")};
  std::string attachment;
  const nlohmann::json j = to_json(r, &attachment);
  EXPECT_EQ(attachment, cubin);
  const CandidateRequest back = candidate_request_from_json(j, &attachment);
  ASSERT_EQ(back.launches.size(), 2U);
  EXPECT_EQ(back.launches[1].cubin, cubin);
  EXPECT_EQ(back.launches[1].function, "_Z6reducev");
}

TEST(LaunchSequenceProtocol, EmptySequenceBadMainLaunchAndStraySliceAreBadInput) {
  Rng rng;
  const CandidateRequest r = split_k_request(rng, rng.bytes(64), rng.bytes(128), rng.bytes(32));
  std::string attachment;
  const nlohmann::json good = to_json(r, &attachment);
  auto error_of = [&](const nlohmann::json& j) -> std::string {
    try {
      candidate_request_from_json(j, &attachment);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
      return e.what();
    }
    return "";
  };
  nlohmann::json empty = good;
  empty["launches"] = nlohmann::json::array();
  EXPECT_NE(error_of(empty).find("no launches"), std::string::npos);
  nlohmann::json past_end = good;
  past_end["main_launch"] = 3;
  EXPECT_NE(error_of(past_end).find("main_launch 3"), std::string::npos);
  nlohmann::json stray = good;
  stray["launches"][2]["cubin"]["offset"] = attachment.size();
  EXPECT_NE(error_of(stray).find("outside"), std::string::npos);
}

TEST(LaunchSequenceProtocol, AFrameOfTheSingleKernelProtocolIsRefused) {
  static_assert(kProtocolVersion >= 2, "launch sequences are protocol version 2");
  FrameDecoder d;
  d.feed(encode_frame({MessageType::kHello, nlohmann::json::object()}, 1));
  try {
    d.next();
    FAIL() << "a version-1 frame was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.api_code(), kProtocolErrorCode);
    EXPECT_NE(std::string(e.what()).find("protocol version 1 received"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ktune::measure
