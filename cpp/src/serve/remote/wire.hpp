// The protocol's field encoding, shared by the message codecs of this folder (private): fixed-width
// little-endian integers, IEEE doubles as their bits, and u32-length-prefixed strings.
#pragma once

#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "servelab/core/errors.hpp"
#include "servelab/serve/remote/protocol.hpp"

namespace servelab::serve::remote {

// Appends fixed-width little-endian integers and length-prefixed strings.
class Writer {
 public:
  explicit Writer(Bytes& out) : out_(out) {}
  template <typename T>
  void put(T value) {
    static_assert(std::is_integral_v<T>);
    using U = std::make_unsigned_t<T>;
    auto bits = static_cast<U>(value);
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      out_.push_back(static_cast<std::uint8_t>(bits & 0xFFu));
      if constexpr (sizeof(T) > 1) bits = static_cast<U>(bits >> 8);
    }
  }
  void text(std::string_view s) {
    put(static_cast<std::uint32_t>(s.size()));
    out_.insert(out_.end(), s.begin(), s.end());
  }
  void bytes(std::span<const std::uint8_t> b) { out_.insert(out_.end(), b.begin(), b.end()); }
  void real(double value) { put(std::bit_cast<std::uint64_t>(value)); }

 private:
  Bytes& out_;
};

// Reads what Writer wrote; ProtocolError when the body is short or a field is out of range.
class Reader {
 public:
  Reader(std::span<const std::uint8_t> bytes, std::string_view message) : bytes_(bytes), message_(message) {}
  template <typename T>
  T get(std::string_view field) {
    static_assert(std::is_integral_v<T>);
    need(sizeof(T), field);
    std::make_unsigned_t<T> bits = 0;
    for (std::size_t i = sizeof(T); i-- > 0;) {
      if constexpr (sizeof(T) > 1) bits = static_cast<std::make_unsigned_t<T>>(bits << 8);
      bits = static_cast<std::make_unsigned_t<T>>(bits | bytes_[pos_ + i]);
    }
    pos_ += sizeof(T);
    return static_cast<T>(bits);
  }
  std::string text(std::string_view field) {
    const auto n = get<std::uint32_t>(field);
    if (n > kMaxTextBytes) fail(str(field, " length=", n, " is over ", kMaxTextBytes));
    need(n, field);
    std::string out(reinterpret_cast<const char*>(bytes_.data() + pos_), n);
    pos_ += n;
    return out;
  }
  void skip(std::size_t n, std::string_view field) {
    need(n, field);
    pos_ += n;
  }
  std::span<const std::uint8_t> bytes(std::size_t n, std::string_view field) {
    need(n, field);
    const auto out = bytes_.subspan(pos_, n);
    pos_ += n;
    return out;
  }
  double real(std::string_view field) { return std::bit_cast<double>(get<std::uint64_t>(field)); }
  std::size_t left() const { return bytes_.size() - pos_; }
  void end() const {
    if (left() != 0) fail(str(left(), " bytes left over after the last field"));
  }
  [[noreturn]] void fail(const std::string& what) const { throw ProtocolError(str(message_, ": ", what)); }

 private:
  void need(std::size_t n, std::string_view field) const {
    if (left() < n) fail(str("the body ends inside ", field, " (", left(), " bytes left, ", n, " needed)"));
  }
  std::span<const std::uint8_t> bytes_;
  std::size_t pos_ = 0;
  std::string_view message_;
};

// Writes the header with a zero length, to be patched once the body is written.
inline Writer start_message(MessageType type, std::uint64_t batch, Bytes& out) {
  out.clear();
  out.insert(out.end(), kMagic.begin(), kMagic.end());
  Writer w(out);
  w.put(kVersion);
  w.put(static_cast<std::uint16_t>(type));
  w.put(batch);
  w.put(std::uint32_t{0});
  return w;
}

inline void finish_message(Bytes& out) {
  const auto body = out.size() - kHeaderBytes;
  if (body > kMaxBodyBytes) throw ValueError(str("message body of ", body, " bytes is over ", kMaxBodyBytes));
  for (std::size_t i = 0; i < 4; ++i) out[kHeaderBytes - 4 + i] = static_cast<std::uint8_t>(body >> (8 * i));
}

}  // namespace servelab::serve::remote
