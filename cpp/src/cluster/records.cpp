#include "servelab/cluster/records.hpp"

#include <cmath>
#include <limits>

namespace servelab::cluster {

void QueryRecords::reserve(std::size_t n) {
  app.reserve(n);
  size.reserve(n);
  arrival.reserve(n);
  deadline.reserve(n);
  dispatch.reserve(n);
  start.reserve(n);
  finish.reserve(n);
  worker.reserve(n);
  model.reserve(n);
  batch_items.reserve(n);
  batch_queries.reserve(n);
  status.reserve(n);
  drop_reason.reserve(n);
  accuracy.reserve(n);
  cost.reserve(n);
}

void QueryRecords::append(std::int16_t app_index, std::int32_t items, Nanos arrival_time, Nanos deadline_time) {
  app.push_back(app_index);
  size.push_back(items);
  arrival.push_back(arrival_time);
  deadline.push_back(deadline_time);
  dispatch.push_back(-1);
  start.push_back(-1);
  finish.push_back(-1);
  worker.push_back(-1);
  model.push_back(-1);
  batch_items.push_back(0);
  batch_queries.push_back(0);
  status.push_back(static_cast<std::int8_t>(QueryStatus::Dropped));
  drop_reason.push_back(-1);
  accuracy.push_back(std::numeric_limits<float>::quiet_NaN());
  cost.push_back(0.f);
}

}  // namespace servelab::cluster
