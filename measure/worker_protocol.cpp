#include "measure/worker_protocol.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "ktune/error.hpp"

namespace ktune::measure {

namespace {
constexpr char kMagic[4] = {'K', 'T', 'W', 'P'};

[[noreturn]] void protocol_error(const std::string& what) {
  throw Error(ErrorKind::kRuntime, "worker protocol error: " + what, std::string(kProtocolErrorCode));
}

void put_u16(std::string& s, uint16_t v) {
  s.push_back(static_cast<char>(v & 0xFF));
  s.push_back(static_cast<char>(v >> 8));
}
void put_u32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
uint32_t get_le(const std::string& s, std::size_t at, int bytes) {
  uint32_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= static_cast<uint32_t>(static_cast<unsigned char>(s[at + i])) << (8 * i);
  return v;
}

bool known_type(uint32_t t) { return t >= 1 && t <= 4; }

std::string printable_prefix(std::string_view bytes) {
  std::string out;
  for (char c : bytes.substr(0, 16)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u >= 0x20 && u < 0x7F) ? std::string(1, c) : fmt::format("\\x{:02x}", u);
  }
  return out;
}
}  // namespace

std::string_view to_string(MessageType type) {
  switch (type) {
    case MessageType::kHello:
      return "hello";
    case MessageType::kMeasure:
      return "measure";
    case MessageType::kResult:
      return "result";
    case MessageType::kShutdown:
      return "shutdown";
  }
  return "?";
}

std::string encode_frame(const Message& message, uint16_t version) {
  const std::vector<uint8_t> body = nlohmann::json::to_cbor(message.body);
  if (body.size() > kMaxBodyBytes) {
    throw Error(ErrorKind::kBadInput, fmt::format("message body of {} bytes exceeds the protocol's {} bytes",
                                                  body.size(), kMaxBodyBytes));
  }
  std::string frame(kMagic, 4);
  put_u16(frame, version);
  put_u16(frame, static_cast<uint16_t>(message.type));
  if (message.attachment.size() > kMaxBodyBytes) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("message attachment of {} bytes exceeds the protocol's {} bytes",
                            message.attachment.size(), kMaxBodyBytes));
  }
  put_u32(frame, static_cast<uint32_t>(body.size()));
  put_u32(frame, static_cast<uint32_t>(message.attachment.size()));
  frame.append(reinterpret_cast<const char*>(body.data()), body.size());
  frame.append(message.attachment);
  return frame;
}

std::optional<Message> FrameDecoder::next() {
  if (buffer_.size() < 4) {
    if (buffer_.compare(0, buffer_.size(), kMagic, buffer_.size()) != 0) {
      protocol_error(fmt::format("bad magic: got \"{}\", expected \"KTWP\"", printable_prefix(buffer_)));
    }
    return std::nullopt;
  }
  if (std::memcmp(buffer_.data(), kMagic, 4) != 0) {
    protocol_error(fmt::format("bad magic: got \"{}\", expected \"KTWP\"", printable_prefix(buffer_)));
  }
  if (buffer_.size() < kFrameHeaderBytes) return std::nullopt;
  const uint32_t version = get_le(buffer_, 4, 2);
  const uint32_t type = get_le(buffer_, 6, 2);
  const uint32_t length = get_le(buffer_, 8, 4);
  const uint32_t attached = get_le(buffer_, 12, 4);
  if (version != kProtocolVersion) {
    protocol_error(
        fmt::format("protocol version {} received, this build speaks {} (parent and worker must be "
                    "the same ktune build)",
                    version, kProtocolVersion));
  }
  if (!known_type(type)) protocol_error(fmt::format("unknown message type {}", type));
  if (length > kMaxBodyBytes) protocol_error(fmt::format("body length {} exceeds {}", length, kMaxBodyBytes));
  if (attached > kMaxBodyBytes) {
    protocol_error(fmt::format("attachment length {} exceeds {}", attached, kMaxBodyBytes));
  }
  const std::size_t total = kFrameHeaderBytes + std::size_t{length} + attached;
  if (buffer_.size() < total) return std::nullopt;
  Message m;
  m.type = static_cast<MessageType>(type);
  try {
    m.body = nlohmann::json::from_cbor(buffer_.begin() + kFrameHeaderBytes,
                                       buffer_.begin() + static_cast<long>(kFrameHeaderBytes + length));
  } catch (const nlohmann::json::exception& e) {
    protocol_error(fmt::format("{} body is not CBOR: {}", to_string(m.type), e.what()));
  }
  m.attachment = buffer_.substr(kFrameHeaderBytes + length, attached);
  buffer_.erase(0, total);
  return m;
}

void write_message(int fd, const Message& message) {
  const std::string frame = encode_frame(message);
  std::size_t done = 0;
  while (done < frame.size()) {
    ssize_t n = ::send(fd, frame.data() + done, frame.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == ENOTSOCK) n = ::write(fd, frame.data() + done, frame.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(ErrorKind::kRuntime,
                  fmt::format("writing a {} message to the worker pipe failed: {}", to_string(message.type),
                              std::strerror(errno)),
                  "EPIPE");
    }
    done += static_cast<std::size_t>(n);
  }
}

std::optional<Message> read_message(int fd, FrameDecoder& decoder) {
  char chunk[65536];
  for (;;) {
    if (auto m = decoder.next()) return m;
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(ErrorKind::kRuntime,
                  fmt::format("reading the worker pipe failed: {}", std::strerror(errno)));
    }
    if (n == 0) {
      if (decoder.pending() == 0) return std::nullopt;
      protocol_error(fmt::format("stream ended inside a frame ({} bytes pending)", decoder.pending()));
    }
    decoder.feed({chunk, static_cast<std::size_t>(n)});
  }
}

}  // namespace ktune::measure
