#include "servelab/serve/remote/protocol.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string_view>
#include <type_traits>

namespace servelab::serve::remote {
namespace {

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
Writer start(MessageType type, std::uint64_t batch, Bytes& out) {
  out.clear();
  out.insert(out.end(), kMagic.begin(), kMagic.end());
  Writer w(out);
  w.put(kVersion);
  w.put(static_cast<std::uint16_t>(type));
  w.put(batch);
  w.put(std::uint32_t{0});
  return w;
}

void finish(Bytes& out) {
  const auto body = out.size() - kHeaderBytes;
  if (body > kMaxBodyBytes) throw ValueError(str("message body of ", body, " bytes is over ", kMaxBodyBytes));
  for (std::size_t i = 0; i < 4; ++i) out[kHeaderBytes - 4 + i] = static_cast<std::uint8_t>(body >> (8 * i));
}

Status read_status(Reader& r, std::string_view field) {
  const auto s = r.get<std::uint32_t>(field);
  if (s > static_cast<std::uint32_t>(Status::Refused)) r.fail(str(field, "=", s, " is not a status"));
  return static_cast<Status>(s);
}

}  // namespace

std::string_view status_name(Status status) {
  switch (status) {
    case Status::Ok:
      return "ok";
    case Status::ExecutorFailed:
      return "executor failed";
    case Status::Malformed:
      return "malformed message";
    case Status::Refused:
      return "refused";
  }
  return "unknown";
}

void encode(const Hello& m, Bytes& out) {
  Writer w = start(MessageType::Hello, 0, out);
  w.put(m.worker);
  w.put(m.hardware);
  w.put(m.seed);
  w.text(m.executor);
  finish(out);
}

void encode(const HelloReply& m, Bytes& out) {
  Writer w = start(MessageType::HelloReply, 0, out);
  w.put(static_cast<std::uint32_t>(m.status));
  w.text(m.text);
  w.put(static_cast<std::uint32_t>(m.knobs.size()));
  for (const auto& k : m.knobs) w.text(k);
  finish(out);
}

void encode(std::uint64_t batch, const Batch& m, Bytes& out) {
  Writer w = start(MessageType::Batch, batch, out);
  w.put(m.model);
  w.put(m.items);
  w.put(static_cast<std::uint32_t>(m.queries.size()));
  w.put(static_cast<std::uint32_t>(m.sizes.size()));
  w.put(static_cast<std::uint32_t>(m.config.size()));
  w.put(m.input_bytes);
  for (const auto q : m.queries) w.put(q);
  for (const auto s : m.sizes) w.put(s);
  for (const auto& [name, value] : m.config) {
    w.text(name);
    w.put(value);
  }
  out.resize(out.size() + m.input_bytes, 0);
  finish(out);
}

void encode(std::uint64_t batch, const BatchReply& m, Bytes& out) {
  Writer w = start(MessageType::BatchReply, batch, out);
  w.put(static_cast<std::uint32_t>(m.status));
  w.put(m.exec_ns);
  w.put(m.worker_ns);
  w.text(m.error.size() > kMaxTextBytes ? m.error.substr(0, kMaxTextBytes) : m.error);
  finish(out);
}

Header decode_header(std::span<const std::uint8_t> bytes) {
  Reader r(bytes, "header");
  if (bytes.size() != kHeaderBytes) r.fail(str(bytes.size(), " bytes, expected ", kHeaderBytes));
  if (!std::equal(kMagic.begin(), kMagic.end(), bytes.begin())) {
    std::string got;
    for (std::size_t i = 0; i < 4; ++i) got += str(i ? " " : "", static_cast<int>(bytes[i]));
    r.fail(str("magic=[", got, "] is not 'SLRW' (not a servelab worker message)"));
  }
  r.skip(4, "magic");
  const auto version = r.get<std::uint16_t>("version");
  if (version != kVersion) r.fail(str("version=", version, " is not supported (this side speaks ", kVersion, ")"));
  const auto type = r.get<std::uint16_t>("type");
  if (type < 1 || type > 4) r.fail(str("type=", type, " is not a message type (1..4)"));
  Header h;
  h.type = static_cast<MessageType>(type);
  h.batch = r.get<std::uint64_t>("batch");
  h.length = r.get<std::uint32_t>("length");
  if (h.length > kMaxBodyBytes) r.fail(str("length=", h.length, " is over the limit of ", kMaxBodyBytes, " bytes"));
  return h;
}

Hello decode_hello(std::span<const std::uint8_t> body) {
  Reader r(body, "hello");
  Hello m;
  m.worker = r.get<std::int64_t>("worker");
  m.hardware = r.get<std::int64_t>("hardware");
  m.seed = r.get<std::uint64_t>("seed");
  m.executor = r.text("executor");
  r.end();
  constexpr auto kMaxId = std::numeric_limits<std::int32_t>::max();
  if (m.worker < 0 || m.worker > kMaxId) r.fail(str("worker=", m.worker, " is out of range"));
  if (m.hardware < 0 || m.hardware > kMaxId) r.fail(str("hardware=", m.hardware, " is out of range"));
  return m;
}

HelloReply decode_hello_reply(std::span<const std::uint8_t> body) {
  Reader r(body, "hello reply");
  HelloReply m;
  m.status = read_status(r, "status");
  m.text = r.text("text");
  const auto n = r.get<std::uint32_t>("knob count");
  if (n > kMaxKnobs) r.fail(str("knob count=", n, " is over ", kMaxKnobs));
  for (std::uint32_t i = 0; i < n; ++i) m.knobs.push_back(r.text("knob"));
  r.end();
  return m;
}

Batch decode_batch(std::span<const std::uint8_t> body) {
  Reader r(body, "batch");
  Batch m;
  m.model = r.get<std::int64_t>("model");
  m.items = r.get<std::int64_t>("items");
  const auto queries = r.get<std::uint32_t>("query count");
  const auto sizes = r.get<std::uint32_t>("sizes count");
  const auto knobs = r.get<std::uint32_t>("config count");
  m.input_bytes = r.get<std::uint32_t>("input bytes");
  // Checked against what is left before allocating anything.
  if (queries == 0 || std::uint64_t{queries} * 8 > r.left()) {
    r.fail(str("query count=", queries, " does not fit the ", r.left(), " bytes left"));
  }
  if (sizes != 0 && sizes != queries) r.fail(str("sizes count=", sizes, " is neither 0 nor the query count ", queries));
  if (knobs > kMaxKnobs) r.fail(str("config count=", knobs, " is over ", kMaxKnobs));
  if (m.model < 0 || m.model > std::numeric_limits<std::int32_t>::max()) {
    r.fail(str("model=", m.model, " is out of range"));
  }
  m.queries.resize(queries);
  for (auto& q : m.queries) {
    q = r.get<std::int64_t>("query id");
    if (q < 0) r.fail(str("query id=", q, " is negative"));
  }
  std::int64_t total = 0;
  m.sizes.resize(sizes);
  for (auto& s : m.sizes) {
    s = r.get<std::int32_t>("size");
    if (s < 1) r.fail(str("size=", s, " must be >= 1"));
    total += s;
  }
  if (sizes == 0) total = queries;
  if (m.items != total) r.fail(str("items=", m.items, " is not the queries' ", total, " items"));
  for (std::uint32_t i = 0; i < knobs; ++i) {
    auto name = r.text("config name");
    m.config[std::move(name)] = r.get<std::int64_t>("config value");
  }
  if (r.left() != m.input_bytes) r.fail(str("input bytes=", m.input_bytes, " but ", r.left(), " bytes are left"));
  r.skip(m.input_bytes, "input bytes");
  return m;
}

BatchReply decode_batch_reply(std::span<const std::uint8_t> body) {
  Reader r(body, "batch reply");
  BatchReply m;
  m.status = read_status(r, "status");
  m.exec_ns = r.get<std::int64_t>("exec ns");
  m.worker_ns = r.get<std::int64_t>("worker ns");
  m.error = r.text("error");
  r.end();
  return m;
}

}  // namespace servelab::serve::remote
