#include "servelab/workload/workload.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <span>
#include <utility>

#include "arrival_merge.hpp"
#include "format.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"
#include "servelab/core/memory.hpp"

namespace servelab::workload {

using detail::num;

namespace {

constexpr Nanos kMaxNanos = std::numeric_limits<Nanos>::max();

// What both generators below share: numbering the queries, drawing each one's size from its
// application's stream and filling it in, and the end of the run.
class QueryMaker {
 public:
  QueryMaker(const Workload& w, std::uint64_t seed) : workload_(w), seed_(seed), size_rngs_(w.apps().size()) {
    for (const Application& app : w.apps()) {
      fields_.push_back({app.slo, stored_accuracy_floor(app.accuracy_floor), app.sizes != nullptr});
    }
  }

  // Whether another query may come (the run has not ended nor reached max_count).
  bool open() const { return !done_ && n_ < workload_.max_count(); }
  // How many more queries may come before max_count (0 once the run has ended).
  std::int64_t remaining() const { return done_ ? 0 : workload_.max_count() - n_; }
  // Ends the run; returns false, for the generator's next() to return.
  bool end() {
    done_ = true;
    return false;
  }
  // The next query: application `a`'s, arriving at t. Returns true.
  bool make(Query& q, std::size_t a, Nanos t) {
    fill(q, n_++, a, t, fields_[a]);
    return true;
  }
  // make() for the queries arriving at times[0, count), each of application pick_app() (called
  // in order), up to the first time at or after `horizon` (the run then ends); returns how many
  // were made. The count is kept in a local: stores to `out` may alias the members.
  template <typename PickApp>
  std::size_t make_block(Query* out, const Nanos* times, std::size_t count, Nanos horizon, PickApp&& pick_app) {
    const AppFields* fields = fields_.data();
    std::int64_t n = n_;
    std::size_t j = 0;
    for (; j < count && times[j] < horizon; ++j) {
      const std::size_t a = pick_app();
      fill(out[j], n++, a, times[j], fields[a]);
    }
    n_ = n;
    if (j < count) end();
    return j;
  }

 private:
  // What make() reads of an application, packed (one line for several applications).
  struct AppFields {
    Nanos slo;
    float accuracy_floor;  // stored_accuracy_floor(), once
    bool sized;            // has a size distribution (else every size is 1)
  };

  void fill(Query& q, std::int64_t id, std::size_t a, Nanos t, const AppFields& f) {
    q.id = id;
    q.app = static_cast<std::int32_t>(a);
    q.size = f.sized ? sample_size(a) : 1;
    q.arrival = t;
    q.deadline = t > kMaxNanos - f.slo ? kMaxNanos : t + f.slo;
    q.accuracy_floor = f.accuracy_floor;
  }

  // Out of line: with every size 1, making a query is a few stores in the generator's loop.
  // Streams are created on first use: an application that never gets a query costs nothing.
  [[gnu::noinline]] std::int32_t sample_size(std::size_t a) {
    if (!size_rngs_[a]) size_rngs_[a] = std::make_unique<Rng>(seed_, str("sizes/", a));
    return workload_.apps()[a].sizes->sample(*size_rngs_[a]);
  }

  const Workload& workload_;
  std::uint64_t seed_;
  std::vector<std::unique_ptr<Rng>> size_rngs_;
  std::vector<AppFields> fields_;  // by application
  std::int64_t n_ = 0;
  bool done_ = false;
};

// The loop behind start() and generate() for one shared arrival process: non-virtual, so bulk
// generation pays only the arrival cursor's and the size distribution's calls per query.
class Generator {
 public:
  Generator(const Workload& w, const detail::AliasTable& choice, std::uint64_t seed)
      : workload_(w),
        choice_(choice),
        cursor_(w.arrivals().start(Rng(seed, kArrivalStream))),
        apps_rng_(seed, kAppStream),
        maker_(w, seed) {}

  bool next(Query& q) {
    if (!maker_.open()) return maker_.end();
    const auto t = cursor_->next();
    if (!t || *t >= workload_.horizon()) return maker_.end();
    return maker_.make(q, pick_app(), *t);
  }

  // next() for up to n queries: the arrival times come a block at a time (one virtual call for
  // many), and each query is then made as next() makes it, so the queries are the same.
  std::size_t next_block(Query* out, std::size_t n) {
    const bool one_app = workload_.apps().size() == 1;  // read once: stores to `out` may alias it
    const auto pick = [&]() -> std::size_t { return one_app ? 0 : choice_.pick(apps_rng_); };
    std::size_t i = 0;
    while (i < n) {
      const auto want = static_cast<std::size_t>(
          std::min<std::int64_t>(maker_.remaining(), static_cast<std::int64_t>(std::min(n - i, kTimesBlock))));
      const std::size_t got = want == 0 ? 0 : cursor_->next_times(times_, want);
      if (got == 0) {
        maker_.end();
        break;
      }
      const std::size_t made = maker_.make_block(out + i, times_, got, workload_.horizon(), pick);
      i += made;
      if (made < got) break;  // the horizon
    }
    return i;
  }

 private:
  static constexpr std::size_t kTimesBlock = 128;

  std::size_t pick_app() { return workload_.apps().size() == 1 ? 0 : choice_.pick(apps_rng_); }

  const Workload& workload_;
  const detail::AliasTable& choice_;
  std::unique_ptr<ArrivalCursor> cursor_;
  Rng apps_rng_;
  QueryMaker maker_;
  Nanos times_[kTimesBlock];
};

// The same loop when every application has its own arrival process: the next query is the
// earliest pending arrival of any application (the horizon is applied by the merge).
class PerAppGenerator {
 public:
  PerAppGenerator(const Workload& w, std::uint64_t seed) : merge_(w.apps(), seed, w.horizon()), maker_(w, seed) {}

  bool next(Query& q) {
    if (!maker_.open()) return maker_.end();
    Nanos t = 0;
    std::size_t a = 0;
    if (!merge_.next(t, a)) return maker_.end();
    return maker_.make(q, a, t);
  }
  // The merge yields one time at a time: a block is next() in a loop.
  std::size_t next_block(Query* out, std::size_t n) {
    std::size_t i = 0;
    while (i < n && next(out[i])) ++i;
    return i;
  }

 private:
  detail::ArrivalMerge merge_;
  QueryMaker maker_;
};

template <typename Vector>
void trim(Vector& v) {
  if (v.capacity() > 2 * v.size() + 4096) v.shrink_to_fit();
}

// Calls take(block, n) for every query of a generator, in order, a block at a time. A template per
// generator keeps the loop as tight as one written for it (a per-query callback cost about 8%).
template <typename Gen, typename Take>
void for_each_block(Gen& g, Take take) {
  constexpr std::size_t kBlock = 256;
  Query block[kBlock];
  for (std::size_t blocks = 0;; ++blocks) {
    if ((blocks & 15) == 0) core::check_interrupt();
    const std::size_t n = g.next_block(block, kBlock);
    take(block, n);
    if (n < kBlock) return;
  }
}

// Every query of a generator, in order.
template <typename Gen>
std::vector<Query> generate_queries(Gen g, std::size_t expected) {
  std::vector<Query> out;
  out.reserve(expected);
  for_each_block(g, [&](const Query* block, std::size_t n) { out.insert(out.end(), block, block + n); });
  trim(out);
  return out;
}

// The same queries as columns.
template <typename Gen>
QueryColumns generate_query_columns(Gen g, std::size_t expected) {
  QueryColumns c;
  c.id.reserve(expected);
  c.app.reserve(expected);
  c.size.reserve(expected);
  c.arrival_s.reserve(expected);
  c.deadline_s.reserve(expected);
  c.accuracy_floor.reserve(expected);
  for_each_block(g, [&](const Query* block, std::size_t n) {
    for (const Query& q : std::span(block, n)) {
      c.id.push_back(q.id);
      c.app.push_back(q.app);
      c.size.push_back(q.size);
      c.arrival_s.push_back(nanos_to_seconds(q.arrival));
      c.deadline_s.push_back(nanos_to_seconds(q.deadline));
      c.accuracy_floor.push_back(q.accuracy_floor);
    }
  });
  trim(c.id);
  trim(c.app);
  trim(c.size);
  trim(c.arrival_s);
  trim(c.deadline_s);
  trim(c.accuracy_floor);
  return c;
}

// Owns what a lazy stream needs, so it stays valid if the caller drops the Workload.
template <typename Gen>
class Stream final : public QueryStream {
 public:
  template <typename... Args>
  Stream(std::shared_ptr<const Workload> workload, std::uint64_t seed, const Args&... args)
      : workload_(std::move(workload)), generator_(*workload_, args..., seed) {}
  std::optional<Query> next() override {
    Query q;
    if (!generator_.next(q)) return std::nullopt;
    return q;
  }
  std::size_t next_block(Query* out, std::size_t n) override { return generator_.next_block(out, n); }

 private:
  std::shared_ptr<const Workload> workload_;
  Gen generator_;
};

// The expected number of queries (capped at 2^26) so the columns are allocated once.
std::size_t expected_count(const Workload& w) {
  double expected = static_cast<double>(w.max_count());
  const double rate = w.mean_rate();
  if (w.horizon() != kUnlimitedHorizon && std::isfinite(rate)) {
    const double mean = rate * nanos_to_seconds(w.horizon());
    expected = std::min(expected, mean + 6 * std::sqrt(mean) + 16);
  }
  return static_cast<std::size_t>(std::min(expected, double{1 << 26}));
}

// Either the workload has the arrival process, or every application has its own.
void check_arrivals_rule(const ArrivalProcess* shared, const std::vector<Application>& apps) {
  const auto with = std::find_if(apps.begin(), apps.end(), [](const Application& a) { return a.arrivals; });
  if (with == apps.end()) {
    if (!shared) throw ValueError("arrivals is null: give an arrival process, or one to every application");
    return;
  }
  const auto at = [&](auto it) { return str("apps[", it - apps.begin(), "] ('", it->name, "')"); };
  if (shared) {
    throw ValueError(str(at(with), ": arrivals=", with->arrivals->describe(),
                         " given while the workload has arrivals=", shared->describe(),
                         ": give the arrival process to the workload or to every application, not both"));
  }
  const auto without = std::find_if(apps.begin(), apps.end(), [](const Application& a) { return !a.arrivals; });
  if (without != apps.end()) {
    throw ValueError(str(at(without), ": arrivals=None while ", at(with), " has arrivals=", with->arrivals->describe(),
                         ": give every application its own arrival process, or none and the workload one"));
  }
}

// With per-application arrivals, each application's expected share of the queries: its mean rate
// over the sum (NaN for every application when some rate is not known).
std::vector<double> rate_shares(const std::vector<Application>& apps) {
  std::vector<double> shares;
  double total = 0;
  for (const auto& a : apps) total += shares.emplace_back(a.arrivals->mean_rate());
  for (double& s : shares) s = std::isfinite(total) && total > 0 ? s / total : std::nan("");
  return shares;
}

}  // namespace

void validate_application(const Application& app) {
  if (app.name.empty()) throw ValueError("application name='' is empty: give each application a name");
  const std::string who = str("application '", app.name, "': ");
  if (!detail::positive_finite(app.share)) {
    throw ValueError(str(who, "share=", num(app.share), " must be positive and finite"));
  }
  if (app.slo <= 0) throw ValueError(str(who, "slo=", app.slo, " ns must be > 0"));
  if (!(app.accuracy_floor >= 0 && app.accuracy_floor <= 1)) {
    throw ValueError(str(who, "accuracy_floor=", num(app.accuracy_floor), " must be in [0, 1]"));
  }
}

std::vector<double> zipf_shares(std::int64_t n, double exponent) {
  if (n < 1 || n > (std::int64_t{1} << 31)) throw ValueError(str("n=", n, " must be in [1, 2^31]"));
  if (!detail::non_negative_finite(exponent)) {
    throw ValueError(str("exponent=", num(exponent), " must be non-negative and finite"));
  }
  std::vector<double> shares(static_cast<std::size_t>(n));
  double sum = 0;
  for (std::int64_t i = 0; i < n; ++i) sum += shares[i] = std::pow(static_cast<double>(i + 1), -exponent);
  for (double& s : shares) s /= sum;
  return shares;
}

Workload::Workload(std::shared_ptr<const ArrivalProcess> arrivals, std::vector<Application> apps,
                   std::int64_t max_count, Nanos horizon)
    : arrivals_(std::move(arrivals)), apps_(std::move(apps)), max_count_(max_count), horizon_(horizon) {
  if (apps_.empty()) throw ValueError("apps is empty: give at least one application");
  check_arrivals_rule(arrivals_.get(), apps_);
  if (apps_.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    throw ValueError(str("apps has ", apps_.size(), " applications, more than 2^31 - 1"));
  }
  std::set<std::string> names;
  std::vector<double> shares;
  for (std::size_t i = 0; i < apps_.size(); ++i) {
    try {
      validate_application(apps_[i]);
    } catch (const ValueError& e) {
      throw ValueError(str("apps[", i, "]: ", e.what()));
    }
    if (!names.insert(apps_[i].name).second) {
      throw ValueError(
          str("apps[", i, "]: name='", apps_[i].name, "' is used twice: application names must be unique"));
    }
    shares.push_back(apps_[i].share);
  }
  double total = 0;
  for (const double s : shares) total += s;
  if (!std::isfinite(total)) throw ValueError("the shares of apps sum to infinity");
  if (max_count < 0) throw ValueError(str("max_count=", max_count, " must be >= 0"));
  if (horizon < 0) throw ValueError(str("horizon=", horizon, " ns must be >= 0"));
  if (max_count == kUnlimitedCount && horizon == kUnlimitedHorizon) {
    throw ValueError("max_count and horizon are both unlimited: give at least one of them");
  }
  if (arrivals_) {
    app_choice_ = detail::AliasTable(shares);
    shares_ = app_choice_.probabilities();
  } else {
    shares_ = rate_shares(apps_);
  }
}

std::size_t QueryStream::next_block(Query* out, std::size_t n) {
  std::size_t i = 0;
  for (; i < n; ++i) {
    auto q = next();
    if (!q) break;
    out[i] = *q;
  }
  return i;
}

std::string app_arrival_stream(std::size_t app_index) { return str(kArrivalStream, "/", app_index); }

std::unique_ptr<QueryStream> Workload::start(std::uint64_t seed) const {
  // The stream keeps its own copy of this (cheap: shared parts), so it outlives the caller's.
  auto self = std::make_shared<const Workload>(*this);
  if (per_app_arrivals()) return std::make_unique<Stream<PerAppGenerator>>(std::move(self), seed);
  const detail::AliasTable& table = self->app_choice_;
  return std::make_unique<Stream<Generator>>(std::move(self), seed, table);
}

std::vector<Query> Workload::generate(std::uint64_t seed) const {
  check_memory(sizeof(Query), "the generated queries");
  if (per_app_arrivals()) return generate_queries(PerAppGenerator(*this, seed), expected_count(*this));
  return generate_queries(Generator(*this, app_choice_, seed), expected_count(*this));
}

QueryColumns Workload::generate_columns(std::uint64_t seed) const {
  constexpr std::size_t kBytesPerQuery =
      sizeof(QueryId) + 2 * sizeof(std::int32_t) + 2 * sizeof(double) + sizeof(float);
  check_memory(kBytesPerQuery, "the generated columns");
  if (per_app_arrivals()) return generate_query_columns(PerAppGenerator(*this, seed), expected_count(*this));
  return generate_query_columns(Generator(*this, app_choice_, seed), expected_count(*this));
}

std::string Workload::describe_limits() const {
  return str("count=", max_count_ == kUnlimitedCount ? std::string("None") : str(max_count_),
             ", horizon_s=", horizon_ == kUnlimitedHorizon ? std::string("None") : num(nanos_to_seconds(horizon_)));
}

const ArrivalProcess& Workload::arrivals() const {
  if (!arrivals_) throw RuntimeError("this workload has no shared arrival process: each application has its own");
  return *arrivals_;
}

double Workload::mean_rate() const {
  if (arrivals_) return arrivals_->mean_rate();
  double total = 0;
  for (const auto& a : apps_) total += a.arrivals->mean_rate();
  return total;
}

double Workload::expected_queries() const {
  const double count =
      max_count_ == kUnlimitedCount ? std::numeric_limits<double>::infinity() : static_cast<double>(max_count_);
  double arrivals = 0;  // NaN when some process cannot tell
  if (arrivals_) {
    arrivals = arrivals_->expected_arrivals(horizon_);
  } else {
    for (const auto& a : apps_) arrivals += a.arrivals->expected_arrivals(horizon_);
  }
  return std::isnan(arrivals) ? count : std::min(count, arrivals);
}

void Workload::check_memory(double bytes_per_query, std::string_view what) const {
  const double queries = expected_queries();
  if (!std::isfinite(queries)) return;  // no estimate: such a run grows as it goes
  const double need = queries * bytes_per_query;
  const auto available = core::available_memory_bytes();
  if (!available || need <= static_cast<double>(*available)) return;
  const std::string cost = str(what, " would need about ", core::format_bytes(need), " (", num(bytes_per_query),
                               " bytes per query), more than the ", core::format_bytes(static_cast<double>(*available)),
                               " of memory available");
  if (max_count_ != kUnlimitedCount && static_cast<double>(max_count_) <= queries) {
    throw MemoryError(str("count=", max_count_, ": ", cost, ": lower count"));
  }
  if (horizon_ != kUnlimitedHorizon) {
    throw MemoryError(str("horizon_s=", num(nanos_to_seconds(horizon_)), " at about ", num(mean_rate()),
                          " queries/s means about ", num(queries), " queries: ", cost,
                          ": lower horizon_s or give a count"));
  }
  throw MemoryError(str(arrivals_ ? "the arrival trace has about " : "the applications' arrival traces have about ",
                        num(queries), " arrivals: ", cost, ": give a count"));
}

std::string Workload::describe() const {
  // With per-application arrivals each application names its process, and shares are not used.
  std::string apps;
  for (const auto& a : apps_) {
    apps +=
        str(apps.empty() ? "" : ", ", "app(name='", a.name, "', ",
            a.arrivals ? str("arrivals=", a.arrivals->describe()) : str("share=", num(a.share)),
            ", slo_s=", num(nanos_to_seconds(a.slo)), ", sizes=", a.sizes ? a.sizes->describe() : "constant(value=1)",
            ", accuracy_floor=", num(a.accuracy_floor), ")");
  }
  std::string limits;
  if (max_count_ != kUnlimitedCount) limits += str(", count=", max_count_);
  if (horizon_ != kUnlimitedHorizon) limits += str(", horizon_s=", num(nanos_to_seconds(horizon_)));
  const std::string arrivals = arrivals_ ? str("arrivals=", arrivals_->describe(), ", ") : "";
  return str("workload(", arrivals, "apps=[", apps, "]", limits, ")");
}

}  // namespace servelab::workload
