#include "servelab/serve/remote/run_profile.hpp"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "wire.hpp"

namespace servelab::serve::remote {
namespace {

// Service statistic codes: 0 sampled, then profile::Statistic's order plus one.
constexpr std::uint8_t kMaxServiceCode = static_cast<std::uint8_t>(profile::Statistic::MeanWithoutMax) + 1;

enum class LatencyKind : std::uint8_t { Samples = 0, Percentiles = 1 };

void put_names(Writer& w, const std::vector<std::string>& names) {
  w.put(static_cast<std::uint32_t>(names.size()));
  for (const auto& n : names) w.text(n);
}

// Names in index order; each must be new, so that the worker's indexes are the controller's.
std::vector<std::string> get_names(Reader& r, std::string_view what) {
  const auto n = r.get<std::uint32_t>(str(what, " count"));
  if (n > kMaxProfileNames || std::uint64_t{n} * 4 > r.left()) {
    r.fail(str(what, " count=", n, " does not fit the ", r.left(), " bytes left"));
  }
  std::vector<std::string> names(n);
  std::set<std::string, std::less<>> seen;
  for (auto& name : names) {
    name = r.text(what);
    if (name.empty() || !seen.insert(name).second) r.fail(str(what, "='", name, "' is empty or repeated"));
  }
  return names;
}

void put_latency(Writer& w, const profile::LatencyDistribution& latency) {
  if (latency.has_samples()) {
    w.put(static_cast<std::uint8_t>(LatencyKind::Samples));
    w.put(static_cast<std::uint32_t>(latency.sorted_values().size()));
    for (const double v : latency.sorted_values()) w.real(v);
  } else {
    w.put(static_cast<std::uint8_t>(LatencyKind::Percentiles));
    w.put(static_cast<std::uint32_t>(latency.percentile_points().size()));
    for (const auto& [p, v] : latency.percentile_points()) {
      w.real(p);
      w.real(v);
    }
  }
}

profile::LatencyDistribution get_latency(Reader& r, const std::string& where) {
  const auto kind = r.get<std::uint8_t>("latency kind");
  if (kind > static_cast<std::uint8_t>(LatencyKind::Percentiles)) {
    r.fail(str(where, " latency kind=", int{kind}, " is neither 0 (samples) nor 1 (percentiles)"));
  }
  const auto n = r.get<std::uint32_t>("latency count");
  const std::uint64_t each = kind == 0 ? 8 : 16;
  if (n == 0 || n * each > r.left())
    r.fail(str(where, " latency count=", n, " does not fit the ", r.left(), " bytes left"));
  try {
    if (kind == 0) {
      std::vector<double> samples(n);
      for (auto& v : samples) v = r.real("latency sample");
      return profile::LatencyDistribution::from_samples(std::move(samples));
    }
    std::vector<std::pair<double, double>> points(n);
    for (auto& [p, v] : points) {
      p = r.real("latency percentile");
      v = r.real("latency seconds");
    }
    return profile::LatencyDistribution::from_percentiles(std::move(points));
  } catch (const ProtocolError&) {
    throw;
  } catch (const ValueError& e) {
    r.fail(str(where, ": ", e.what()));
  }
}

}  // namespace

void encode(const RunProfile& m, Bytes& out) {
  if (!m.profile) throw ValueError("run profile: no profile");
  const auto& p = *m.profile;
  Writer w = start_message(MessageType::RunProfile, 0, out);
  w.put(static_cast<std::uint8_t>(m.service ? static_cast<std::uint8_t>(*m.service) + 1 : 0));
  put_names(w, p.hardware());
  put_names(w, p.models());
  std::vector<std::pair<std::int32_t, std::int32_t>> curves;
  for (const auto& [h, model] : p.pairs()) {
    if (p.has_latency(h, model)) curves.emplace_back(h, model);
  }
  w.put(static_cast<std::uint32_t>(curves.size()));
  for (const auto& [h, model] : curves) {
    const auto batches = p.batches(h, model);
    w.put(static_cast<std::uint32_t>(h));
    w.put(static_cast<std::uint32_t>(model));
    w.put(static_cast<std::uint32_t>(batches.size()));
    for (const auto b : batches) {
      w.put(b);
      put_latency(w, p.latency_at(h, model, b));
    }
  }
  finish_message(out);
}

RunProfile decode_run_profile(std::span<const std::uint8_t> body) {
  Reader r(body, "run profile");
  RunProfile m;
  const auto service = r.get<std::uint8_t>("service");
  if (service > kMaxServiceCode)
    r.fail(str("service=", int{service}, " is not 0 (sampled) or 1..", int{kMaxServiceCode}));
  if (service > 0) m.service = static_cast<profile::Statistic>(service - 1);
  auto p = std::make_shared<profile::Profile>();
  const auto hardware = get_names(r, "hardware");
  const auto models = get_names(r, "model");
  for (const auto& h : hardware) p->add_hardware(h);
  for (const auto& name : models) p->add_model(name);
  const auto curves = r.get<std::uint32_t>("curve count");
  if (std::uint64_t{curves} * 12 > r.left())
    r.fail(str("curve count=", curves, " does not fit the ", r.left(), " bytes left"));
  std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
  for (std::uint32_t c = 0; c < curves; ++c) {
    const auto h = r.get<std::uint32_t>("curve hardware");
    const auto model = r.get<std::uint32_t>("curve model");
    if (h >= hardware.size()) r.fail(str("curve hardware=", h, " is not one of the ", hardware.size(), " hardware"));
    if (model >= models.size()) r.fail(str("curve model=", model, " is not one of the ", models.size(), " models"));
    if (!seen.emplace(h, model).second) r.fail(str("curve (", hardware[h], ", ", models[model], ") is repeated"));
    const auto batches = r.get<std::uint32_t>("batch count");
    if (batches == 0 || std::uint64_t{batches} * 13 > r.left()) {
      r.fail(str("batch count=", batches, " of (", hardware[h], ", ", models[model], ") does not fit the ", r.left(),
                 " bytes left"));
    }
    std::int64_t previous = 0;
    for (std::uint32_t i = 0; i < batches; ++i) {
      const auto b = r.get<std::int64_t>("batch");
      const std::string where = str("(", hardware[h], ", ", models[model], ", batch ", b, ")");
      if (b <= previous) r.fail(str(where, " batch=", b, " is not above the previous ", previous));
      previous = b;
      p->set_latency(hardware[h], models[model], b, get_latency(r, where));
    }
  }
  r.end();
  m.profile = std::move(p);
  return m;
}

}  // namespace servelab::serve::remote
