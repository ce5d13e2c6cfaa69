// The RunProfile message: what a worker process needs of the controller's run to host the emulated
// executor (the profile's latencies and the run's service setting), sent once per connection after
// Hello, only when the worker asks for it (HelloReply::needs_profile). docs/scale-out.md has the
// byte layout.
#pragma once

#include <memory>
#include <optional>
#include <span>

#include "servelab/profile/profile.hpp"
#include "servelab/serve/remote/protocol.hpp"

namespace servelab::serve::remote {

// Bounds on what a RunProfile may declare, checked before anything is allocated.
inline constexpr std::uint32_t kMaxProfileNames = 1u << 16;

struct RunProfile {
  // The hardware and model names, in the profile's index order, and every latency curve; prices,
  // accuracies, memory and load times stay with the controller.
  std::shared_ptr<const profile::Profile> profile;
  std::optional<profile::Statistic> service;  // RunSpec::service_statistic (nullopt: sampled)
};

// ValueError when the profile does not fit one message (kMaxBodyBytes).
void encode(const RunProfile& message, Bytes& out);
// ProtocolError naming the field and value: a count or length past the body, an index out of
// range, a repeated name, a latency the profile refuses (not finite, <= 0, percentiles out of order).
RunProfile decode_run_profile(std::span<const std::uint8_t> body);

}  // namespace servelab::serve::remote
