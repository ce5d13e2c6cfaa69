#include "servelab/serve/remote/protocol.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <type_traits>

#include "wire.hpp"

namespace servelab::serve::remote {
namespace {

// Inputs are sent as the controller holds them in memory: little-endian.
static_assert(std::endian::native == std::endian::little, "the remote protocol's input bytes are little-endian");

// The bytes of `shape`'s elements of `item` bytes each, or nullopt past kMaxBodyBytes (never overflows).
std::optional<std::uint64_t> shape_bytes(std::span<const std::int64_t> shape, std::size_t item) {
  std::uint64_t bytes = item;
  for (const auto d : shape) {
    if (d < 0) return std::nullopt;
    if (d != 0 && bytes > kMaxBodyBytes / static_cast<std::uint64_t>(d)) return std::nullopt;
    bytes *= static_cast<std::uint64_t>(d);
  }
  return bytes;
}

std::string shape_text(std::span<const std::int64_t> shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) out += str(i ? ", " : "", shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

// `kind`: "input" (a batch's) or "output" (a reply's), for messages.
void put_input(Writer& w, const InputArray& input, std::size_t q, std::string_view kind = "input") {
  const auto where = [&] {
    return str(kind == "input" ? "batch: " : "batch reply: ", kind, " ", q, " (", dtype_name(input.dtype),
               ", shape=", shape_text(input.shape), ")");
  };
  if (input.shape.size() > kMaxInputDims) {
    throw ValueError(
        str(where(), " has ", input.shape.size(), " dimensions; at most ", int{kMaxInputDims}, " are sent"));
  }
  const auto bytes = shape_bytes(input.shape, dtype_size(input.dtype));
  if (!bytes || *bytes != input.data.size()) {
    throw ValueError(str(where(), " holds ", input.data.size(), " bytes, not its shape's"));
  }
  w.put(static_cast<std::uint8_t>(input.dtype));
  w.put(static_cast<std::uint8_t>(input.scalar ? 1 : 0));
  w.put(static_cast<std::uint8_t>(input.shape.size()));
  for (const auto d : input.shape) w.put(d);
  w.put(static_cast<std::uint32_t>(input.data.size()));
  w.bytes(input.data);
}

// Input `q` (of query `query`): every length, code and dimension checked before anything is kept.
InputArray get_input(Reader& r, std::size_t q, workload::QueryId query, std::string_view kind = "input") {
  const auto field = [&](std::string_view name) { return str(kind, " ", q, " (query ", query, ") ", name); };
  InputArray input;
  const auto code = r.get<std::uint8_t>("input dtype");
  if (code < 1 || code > kMaxDTypeCode) {
    r.fail(str(field("dtype code"), "=", int{code}, " is not a dtype (1..", int{kMaxDTypeCode}, ")"));
  }
  input.dtype = static_cast<DType>(code);
  const auto scalar = r.get<std::uint8_t>("input scalar");
  const auto ndim = r.get<std::uint8_t>("input ndim");
  if (scalar > 1) r.fail(str(field("scalar"), "=", int{scalar}, " is neither 0 nor 1"));
  if (ndim > kMaxInputDims) r.fail(str(field("ndim"), "=", int{ndim}, " is over ", int{kMaxInputDims}));
  if (scalar == 1 && ndim != 0) r.fail(str(field("scalar"), "=1 with ndim=", int{ndim}, " (a scalar has none)"));
  input.scalar = scalar == 1;
  input.shape.resize(ndim);
  for (auto& d : input.shape) {
    d = r.get<std::int64_t>("input shape");
    if (d < 0) r.fail(str(field("shape"), " has dimension ", d, " < 0"));
  }
  const auto expected = shape_bytes(input.shape, dtype_size(input.dtype));
  if (!expected) {
    r.fail(str(field("shape"), "=", shape_text(input.shape), " of ", dtype_name(input.dtype), " is over ",
               kMaxBodyBytes, " bytes"));
  }
  const auto length = r.get<std::uint32_t>("input data length");
  if (length != *expected) {
    r.fail(str(field("data length"), "=", length, " is not the ", *expected,
               " bytes of shape=", shape_text(input.shape), " of ", dtype_name(input.dtype)));
  }
  const auto data = r.bytes(length, "input data");
  input.data.assign(data.begin(), data.end());
  return input;
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
  Writer w = start_message(MessageType::Hello, 0, out);
  w.put(m.worker);
  w.put(m.hardware);
  w.put(m.seed);
  w.put(std::uint32_t{(m.probe ? 1u : 0u) | (m.offers_profile ? 2u : 0u)});
  w.text(m.executor);
  finish_message(out);
}

void encode(const HelloReply& m, Bytes& out) {
  Writer w = start_message(MessageType::HelloReply, 0, out);
  w.put(static_cast<std::uint32_t>(m.status));
  w.text(m.text);
  w.put(static_cast<std::uint32_t>(m.knobs.size()));
  for (const auto& k : m.knobs) w.text(k);
  w.put(static_cast<std::uint32_t>(m.inputs));
  w.put(m.width);
  w.put(std::uint32_t{m.needs_profile ? 1u : 0u});
  finish_message(out);
}

void encode(std::uint64_t batch, const Batch& m, Bytes& out) {
  Writer w = start_message(MessageType::Batch, batch, out);
  w.put(m.model);
  w.put(m.items);
  w.put(static_cast<std::uint32_t>(m.queries.size()));
  w.put(static_cast<std::uint32_t>(m.sizes.size()));
  w.put(static_cast<std::uint32_t>(m.config.size()));
  if (!m.inputs.empty() && m.inputs.size() != m.queries.size()) {
    throw ValueError(str("batch: ", m.inputs.size(), " inputs for ", m.queries.size(), " queries"));
  }
  w.put(static_cast<std::uint32_t>(m.inputs.size()));
  w.put(m.padding_bytes);
  w.put(std::uint32_t{m.wants_outputs ? 1u : 0u});
  for (const auto q : m.queries) w.put(q);
  for (const auto s : m.sizes) w.put(s);
  for (const auto& [name, value] : m.config) {
    w.text(name);
    w.put(value);
  }
  // Sized before anything large is copied.
  std::uint64_t body = out.size() - kHeaderBytes + m.padding_bytes;
  for (const auto& input : m.inputs) body += 7 + 8 * input.shape.size() + input.data.size();
  if (body > kMaxBodyBytes) {
    throw ValueError(str("batch: ", m.queries.size(), " queries with their inputs make a message of ", body,
                         " bytes, over the limit of ", kMaxBodyBytes));
  }
  for (std::size_t q = 0; q < m.inputs.size(); ++q) put_input(w, m.inputs[q], q);
  out.resize(out.size() + m.padding_bytes, 0);
  finish_message(out);
}

void encode(std::uint64_t batch, const BatchReply& m, Bytes& out) {
  Writer w = start_message(MessageType::BatchReply, batch, out);
  w.put(static_cast<std::uint32_t>(m.status));
  w.put(m.exec_ns);
  w.put(m.worker_ns);
  w.text(m.error.size() > kMaxTextBytes ? m.error.substr(0, kMaxTextBytes) : m.error);
  w.put(static_cast<std::uint32_t>(m.outputs.size()));
  std::uint64_t body = out.size() - kHeaderBytes;
  for (const auto& o : m.outputs) body += 1 + (o ? 7 + 8 * o->shape.size() + o->data.size() : 0);
  if (body > kMaxBodyBytes) {
    throw ValueError(str("batch reply: the outputs of ", m.outputs.size(), " queries make a message of ", body,
                         " bytes, over the limit of ", kMaxBodyBytes));
  }
  for (std::size_t q = 0; q < m.outputs.size(); ++q) {
    w.put(static_cast<std::uint8_t>(m.outputs[q] ? 1 : 0));
    if (m.outputs[q]) put_input(w, *m.outputs[q], q, "output");
  }
  finish_message(out);
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
  if (type < 1 || type > 5) r.fail(str("type=", type, " is not a message type (1..5)"));
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
  const auto flags = r.get<std::uint32_t>("flags");
  if (flags > 3) r.fail(str("flags=", flags, " has bits other than 1 (probe) and 2 (offers a profile) set"));
  m.probe = (flags & 1u) != 0;
  m.offers_profile = (flags & 2u) != 0;
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
  const auto inputs = r.get<std::uint32_t>("inputs");
  if (inputs > static_cast<std::uint32_t>(TakesInputs::FloatRows)) r.fail(str("inputs=", inputs, " is not 0, 1 or 2"));
  m.inputs = static_cast<TakesInputs>(inputs);
  m.width = r.get<std::int64_t>("width");
  if (m.inputs == TakesInputs::FloatRows && m.width < 1) r.fail(str("width=", m.width, " must be >= 1 for float rows"));
  const auto flags = r.get<std::uint32_t>("flags");
  if (flags > 1) r.fail(str("flags=", flags, " has bits other than 1 (needs the run's profile) set"));
  m.needs_profile = flags == 1;
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
  const auto inputs = r.get<std::uint32_t>("input count");
  m.padding_bytes = r.get<std::uint32_t>("padding bytes");
  const auto flags = r.get<std::uint32_t>("flags");
  if (flags > 1) r.fail(str("flags=", flags, " has bits other than 1 (wants outputs)"));
  m.wants_outputs = flags == 1;
  // Checked against what is left before allocating anything.
  if (queries == 0 || std::uint64_t{queries} * 8 > r.left()) {
    r.fail(str("query count=", queries, " does not fit the ", r.left(), " bytes left"));
  }
  if (sizes != 0 && sizes != queries) r.fail(str("sizes count=", sizes, " is neither 0 nor the query count ", queries));
  if (inputs != 0 && inputs != queries)
    r.fail(str("input count=", inputs, " is neither 0 nor the query count ", queries));
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
  m.inputs.reserve(inputs);  // at most the query count, which the body's length bounds
  for (std::uint32_t q = 0; q < inputs; ++q) m.inputs.push_back(get_input(r, q, m.queries[q]));
  if (r.left() != m.padding_bytes) r.fail(str("padding bytes=", m.padding_bytes, " but ", r.left(), " bytes are left"));
  r.skip(m.padding_bytes, "padding bytes");
  return m;
}

BatchReply decode_batch_reply(std::span<const std::uint8_t> body) {
  Reader r(body, "batch reply");
  BatchReply m;
  m.status = read_status(r, "status");
  m.exec_ns = r.get<std::int64_t>("exec ns");
  m.worker_ns = r.get<std::int64_t>("worker ns");
  m.error = r.text("error");
  const auto outputs = r.get<std::uint32_t>("output count");
  // Each present output takes at least 15 bytes, an absent one 1: bounded by what is left.
  if (outputs > r.left()) r.fail(str("output count=", outputs, " does not fit the ", r.left(), " bytes left"));
  m.outputs.reserve(outputs);
  for (std::uint32_t q = 0; q < outputs; ++q) {
    const auto present = r.get<std::uint8_t>("output present");
    if (present > 1) r.fail(str("output ", q, " present=", int{present}, " is neither 0 nor 1"));
    if (present == 1) {
      m.outputs.emplace_back(get_input(r, q, q, "output"));
    } else {
      m.outputs.emplace_back(std::nullopt);
    }
  }
  r.end();
  return m;
}

}  // namespace servelab::serve::remote
