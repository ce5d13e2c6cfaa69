// The framed protocol between a serving run's controller (the `remote` executor) and a worker
// process (`servelab worker`), over a Unix socket or TCP. docs/scale-out.md has the byte layout.
//
// Every message is a 20-byte header followed by `length` body bytes, all integers little-endian:
//   magic "SLRW" | version u16 | type u16 | batch id u64 | length u32
// The controller opens one connection per worker of the run and sends Hello, then one Batch at a
// time; the worker answers each with HelloReply / BatchReply carrying the same batch id. A Batch
// may carry the run's own inputs (serve(inputs=...)): one typed array per query. A worker whose
// executor needs the run's profile (emulated) asks for it in HelloReply; the controller sends
// RunProfile (run_profile.hpp) and reads a second HelloReply. A message
// that breaks the protocol (magic, version, type, length, a body that does not add up) gets a
// BatchReply with status Malformed and the connection is closed: its framing can no longer be trusted.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/core/time.hpp"
#include "servelab/serve/executor.hpp"
#include "servelab/serve/input_array.hpp"

namespace servelab::serve::remote {

inline constexpr std::array<std::uint8_t, 4> kMagic = {'S', 'L', 'R', 'W'};
// 2: Hello flags, what the hosted executor takes in HelloReply, the run's inputs in Batch.
// 3: Batch asks for the queries' outputs (a serving session); BatchReply carries them.
inline constexpr std::uint16_t kVersion = 3;
inline constexpr std::size_t kHeaderBytes = 20;
// Bounds that keep a bad or hostile peer from making the other side allocate without limit.
inline constexpr std::uint32_t kMaxBodyBytes = 64u << 20;
inline constexpr std::uint32_t kMaxTextBytes = 64u << 10;
inline constexpr std::uint32_t kMaxKnobs = 1024;
inline constexpr std::uint8_t kMaxInputDims = 32;  // numpy's own limit before 2.0

// RunProfile (controller): the run's profile, sent once after Hello when the hosted executor needs
// it (emulated); the worker then builds its executor and answers a second HelloReply.
enum class MessageType : std::uint16_t { Hello = 1, HelloReply = 2, Batch = 3, BatchReply = 4, RunProfile = 5 };

enum class Status : std::uint32_t {
  Ok = 0,
  ExecutorFailed = 1,  // the executor raised: the batch failed, the connection stays usable
  Malformed = 2,       // the message broke the protocol: the worker closes the connection
  Refused = 3,         // Hello refused (the executor could not be built, or is not the one asked for)
};

// Which of the run's inputs the worker's executor reads, so that the controller checks them before
// the run and sends them only where they are read.
enum class TakesInputs : std::uint32_t {
  None = 0,       // it makes its own (constant, recsys, ...): none are sent
  Arrays = 1,     // each query's input as given (an executor written in Python)
  FloatRows = 2,  // float32 rows of HelloReply::width features (torchscript)
};

// A message that breaks the protocol; the text says which field and value.
class ProtocolError : public ValueError {
 public:
  using ValueError::ValueError;
};

struct Header {
  MessageType type = MessageType::Hello;
  std::uint64_t batch = 0;
  std::uint32_t length = 0;  // body bytes that follow
};

// The controller's first message: which worker of the run this connection serves.
struct Hello {
  std::int64_t worker = 0;
  std::int64_t hardware = 0;
  std::uint64_t seed = 0;  // the run's seed: the worker's executor makes the same inputs as in-process
  std::string executor;    // the executor the worker must host ("": whatever it hosts)
  // Only asks what the worker hosts: it answers HelloReply without building an executor, and the
  // connection ends (the check of serve(inputs=...) before a run).
  bool probe = false;
  // The controller has a run profile to send if the worker's executor needs one (RunProfile).
  bool offers_profile = false;
};

struct HelloReply {
  Status status = Status::Ok;
  std::string text;                // Ok: the hosted executor's describe(); else why it was refused
  std::vector<std::string> knobs;  // Executor::knobs() of the worker's executor
  TakesInputs inputs = TakesInputs::None;
  std::int64_t width = 0;  // FloatRows: features per row
  // The executor is not built yet: it needs the run's profile (emulated). The controller sends
  // RunProfile and reads a second HelloReply.
  bool needs_profile = false;
};

struct Batch {
  std::int64_t model = 0;
  std::int64_t items = 0;
  std::vector<workload::QueryId> queries;
  std::vector<std::int32_t> sizes;  // empty: one item per query
  ConfigKnobs config;
  std::vector<InputArray> inputs;   // empty, or the run's input of each query, parallel to `queries`
  std::uint32_t padding_bytes = 0;  // bytes standing for inputs (input_bytes_per_item), read and dropped
  // The controller reads the queries' outputs (a serving session): the worker sends what its
  // executor writes (ExecRequest::outputs) back in the reply.
  bool wants_outputs = false;
};

struct BatchReply {
  Status status = Status::Ok;
  Nanos exec_ns = -1;    // the executor's own measure, else run()'s wall time on the worker
  Nanos worker_ns = -1;  // from the batch fully received to its reply ready, on the worker
  std::string error;     // why, unless Ok
  // Ok and asked for: each query's output, parallel to the batch's queries; a query whose
  // executor wrote none has none. Empty: no outputs.
  std::vector<std::optional<InputArray>> outputs;
};

using Bytes = std::vector<std::uint8_t>;

// Header then body, appended to `out` (cleared first). ValueError when a message would not fit the
// protocol: a body over kMaxBodyBytes, an input of more than kMaxInputDims dimensions or whose
// bytes are not its shape's, inputs not one per query.
void encode(const Hello& message, Bytes& out);
void encode(const HelloReply& message, Bytes& out);
void encode(std::uint64_t batch, const Batch& message, Bytes& out);
void encode(std::uint64_t batch, const BatchReply& message, Bytes& out);

// ProtocolError naming the field: wrong magic, version or type, or a length over kMaxBodyBytes.
Header decode_header(std::span<const std::uint8_t> bytes);
// Bodies (without the header); ProtocolError when the bytes do not add up to exactly one message.
Hello decode_hello(std::span<const std::uint8_t> body);
HelloReply decode_hello_reply(std::span<const std::uint8_t> body);
Batch decode_batch(std::span<const std::uint8_t> body);
BatchReply decode_batch_reply(std::span<const std::uint8_t> body);

std::string_view status_name(Status status);

}  // namespace servelab::serve::remote
