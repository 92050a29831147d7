#pragma once
/// The parent <-> `ktune worker` wire protocol (docs/design.md D5): length-prefixed frames over a pipe
/// (a Unix socket pair, so a dead peer is EPIPE, never SIGPIPE).
///
/// Frame: 16-byte header, the body, then the attachment.
///   bytes 0..3   magic "KTWP"
///   bytes 4..5   protocol version, little-endian (kProtocolVersion)
///   bytes 6..7   message type, little-endian (MessageType)
///   bytes 8..11  body length, little-endian, at most kMaxBodyBytes
///   bytes 12..15 attachment length, little-endian, at most kMaxBodyBytes
///   body         one CBOR-encoded JSON value
///   attachment   raw bytes the body refers to by offset (the cubins of a candidate's launches, each
///                distinct cubin once: a CBOR byte string decodes at ~140 MB/s, a slice of the
///                attachment at memcpy speed)
/// Anything else — a wrong magic, another version, an unknown type, an oversized length, a body
/// that is not CBOR — is a protocol error (api_code "KTUNE_PROTOCOL_ERROR"); the stream cannot be
/// resynchronised, so the parent kills that worker and starts another.
///
/// Conversation: worker sends kHello once started (body: {"version","pid","ok","error","device"});
/// then for every kMeasure (body: CandidateRequest) one kResult (body: CandidateResult); kShutdown
/// ends it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ktune::measure {

/// 2: a candidate is a sequence of launches ("launches", "main_launch"), no longer one "kernel".
inline constexpr uint16_t kProtocolVersion = 2;
inline constexpr std::size_t kFrameHeaderBytes = 16;
/// 256 MiB: far above any cubin (a few MiB); a larger length is garbage, not a message.
inline constexpr uint32_t kMaxBodyBytes = 256U << 20;
/// The api_code of every protocol error.
inline constexpr std::string_view kProtocolErrorCode = "KTUNE_PROTOCOL_ERROR";

enum class MessageType : uint16_t { kHello = 1, kMeasure = 2, kResult = 3, kShutdown = 4 };
std::string_view to_string(MessageType type);

struct Message {
  Message() = default;
  Message(MessageType t, nlohmann::json b, std::string a = {})
      : type(t), body(std::move(b)), attachment(std::move(a)) {}
  MessageType type = MessageType::kHello;
  nlohmann::json body;
  std::string attachment;  ///< raw bytes after the body (may be empty)
};

/// Header + CBOR body + attachment of `message`.
std::string encode_frame(const Message& message, uint16_t version = kProtocolVersion);

/// Incremental decoder: feed it bytes as they arrive, take whole messages out.
class FrameDecoder {
 public:
  void feed(std::string_view bytes) { buffer_.append(bytes); }
  /// The next whole message, or nullopt when more bytes are needed. Throws ktune::Error with
  /// api_code kProtocolErrorCode on a malformed frame (the message says what was wrong).
  std::optional<Message> next();
  /// Bytes received but not yet consumed.
  std::size_t pending() const { return buffer_.size(); }

 private:
  std::string buffer_;
};

/// Writes a whole frame to `fd` (send with MSG_NOSIGNAL on sockets). Throws ktune::Error(kRuntime)
/// with the errno text when the peer is gone.
void write_message(int fd, const Message& message);

/// Blocking read of one message from `fd` (worker side). Returns nullopt on a clean end of stream
/// before any byte of a frame; throws on a protocol error or a stream cut inside a frame.
std::optional<Message> read_message(int fd, FrameDecoder& decoder);

}  // namespace ktune::measure
