#include "servelab/cluster/stream_summary.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include "servelab/cluster/records.hpp"
#include "servelab/core/errors.hpp"

namespace servelab::cluster {

std::string RecordMode::text() const {
  switch (kind) {
    case Kind::All:
      return "all";
    case Kind::None:
      return "none";
    case Kind::Sample:
      return str("sample(", p, ")");
  }
  return "all";
}

RecordMode parse_record_mode(std::string_view text) {
  auto fail = [&](std::string_view why) {
    return ValueError(str("records='", text, "' ", why, " ('all', 'none' or 'sample(p)' with 0 <= p <= 1)"));
  };
  if (text == "all") return {};
  if (text == "none") return {RecordMode::Kind::None, 0.0};
  constexpr std::string_view open = "sample(";
  if (text.size() <= open.size() + 1 || text.substr(0, open.size()) != open || text.back() != ')') {
    throw fail("is not a record mode");
  }
  const auto arg = text.substr(open.size(), text.size() - open.size() - 1);
  double p = 0;
  const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), p);
  if (ec != std::errc{} || end != arg.data() + arg.size()) throw fail("needs a number p");
  if (!(p >= 0.0 && p <= 1.0)) throw fail("has p outside [0, 1]");
  return {RecordMode::Kind::Sample, p};
}

void StreamGroup::merge(const StreamGroup& o) {
  queries += o.queries;
  completed += o.completed;
  met += o.met;
  if (drops.size() < o.drops.size()) drops.resize(o.drops.size(), 0);
  for (std::size_t r = 0; r < o.drops.size(); ++r) drops[r] += o.drops[r];
  latency_sum += o.latency_sum;
  queue_sum += o.queue_sum;
  service_sum += o.service_sum;
  latency_max = std::max(latency_max, o.latency_max);
  accuracy_done_sum += o.accuracy_done_sum;
  accuracy_met_sum += o.accuracy_met_sum;
  cost_sum += o.cost_sum;
  accuracy_done_n += o.accuracy_done_n;
  accuracy_met_n += o.accuracy_met_n;
  latency.merge(o.latency);
  queue.merge(o.queue);
  service.merge(o.service);
}

StreamSummary::StreamSummary(std::size_t apps, Nanos window) : apps_(apps), window_(window) {
  if (window <= 0) throw ValueError(str("stream window=", window, " ns must be > 0"));
}

StreamWindow& StreamSummary::window_at(Nanos t) {
  const auto w = static_cast<std::size_t>(t / window_);
  if (w >= windows_.size()) windows_.resize(w + 1);
  return windows_[w];
}

void StreamSummary::close_window() {
  if (open_ >= windows_.size()) return;
  windows_[open_].latency_p50 = open_latency_.quantile(0.5);
  windows_[open_].latency_p99 = open_latency_.quantile(0.99);
  open_latency_ = {};
}

void StreamSummary::add(const QueryRecords& r, std::size_t i) {
  ++queries_;
  StreamGroup& g = apps_[static_cast<std::size_t>(r.app[i])];
  const Nanos arrival = r.arrival[i], finish = r.finish[i];
  max_arrival_ = std::max(max_arrival_, arrival);
  max_finish_ = std::max(max_finish_, finish);
  ++g.queries;
  if (!std::isnan(r.cost[i])) g.cost_sum += r.cost[i];
  if (static_cast<std::size_t>(arrival / window_) != open_) {
    close_window();
    open_ = static_cast<std::size_t>(arrival / window_);
  }
  StreamWindow& arrived = window_at(arrival);
  ++arrived.arrivals;
  if (r.status[i] != static_cast<std::int8_t>(QueryStatus::Completed)) {
    const auto reason = static_cast<std::size_t>(r.drop_reason[i] + 1);
    if (g.drops.size() <= reason) g.drops.resize(reason + 1, 0);
    ++g.drops[reason];
    return;
  }
  const bool met = finish <= r.deadline[i];
  const Nanos values[3] = {finish - arrival, r.start[i] - arrival, finish - r.start[i]};
  std::int32_t index[3];
  for (int k = 0; k < 3; ++k) {
    if (values[k] > 0 && values[k] != last_value_[k]) {
      last_value_[k] = values[k];
      last_index_[k] = QuantileSketch::index(values[k]);
    }
    index[k] = last_index_[k];
  }
  auto add_to = [&](QuantileSketch& s, int k) { values[k] > 0 ? s.add(values[k], index[k]) : s.add(0); };
  ++g.completed;
  g.met += met;
  g.latency_sum += values[0];
  g.queue_sum += values[1];
  g.service_sum += values[2];
  g.latency_max = std::max(g.latency_max, values[0]);
  add_to(g.latency, 0);
  add_to(g.queue, 1);
  add_to(g.service, 2);
  const float acc = r.accuracy[i];
  if (!std::isnan(acc)) {
    g.accuracy_done_sum += acc;
    ++g.accuracy_done_n;
    if (met) {
      g.accuracy_met_sum += acc;
      ++g.accuracy_met_n;
    }
    arrived.accuracy_sum += acc;
    ++arrived.accuracy_n;
  }
  ++arrived.completed;
  arrived.met += met;
  add_to(open_latency_, 0);
  StreamWindow& done = window_at(finish);  // after arrived's last use: resizing moves windows
  ++done.finished;
  done.finished_met += met;
}

StreamGroup StreamSummary::overall() const {
  StreamGroup all;
  for (const auto& g : apps_) all.merge(g);
  return all;
}

std::size_t StreamSummary::bytes() const {
  std::size_t b = windows_.capacity() * sizeof(StreamWindow) + open_latency_.bytes();
  for (const auto& g : apps_) {
    b += sizeof(StreamGroup) + g.drops.capacity() * sizeof(std::int64_t) + g.latency.bytes() + g.queue.bytes() +
         g.service.bytes();
  }
  return b;
}

}  // namespace servelab::cluster
