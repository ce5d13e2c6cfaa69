// A worker's own queue of query ids, oldest first: what ClusterView::worker_queue() answers.
//
// Contiguous, so it reads as a range of ids (begin/end are pointers: iterate it, index it, copy
// it into a vector) and answers front(), size() and empty() like the std::deque it replaced. Its
// first ids live inside the object: a worker's queue is mostly a few queries long, and with
// thousands of workers a queue held in its own allocation (a deque's map and 512-byte block) was
// two more cache misses, one after the other, at every enqueue and every dispatch from it. In a
// worker's slot the whole queue, its ids included, is one 64-byte line.
//
// Taking from the front moves a start index; the space it leaves is reused when the ids reach the
// end of the storage and at least half of it is free (otherwise the storage grows, by boost's
// default 60%), so every operation is amortised O(1) but erasing from the middle, and the storage
// stays within four times the most ids the queue has held.
#pragma once

#include <algorithm>
#include <boost/container/small_vector.hpp>
#include <cstddef>
#include <cstdint>

#include "servelab/workload/query.hpp"

namespace servelab::sched {

using workload::QueryId;

class alignas(64) QueryQueue {
 public:
  using value_type = QueryId;
  using size_type = std::size_t;
  using const_iterator = const QueryId*;
  using iterator = const_iterator;  // read-only from outside: the cluster state changes it

  bool empty() const { return head_ == ids_.size(); }
  size_type size() const { return ids_.size() - head_; }
  const_iterator begin() const { return ids_.data() + head_; }
  const_iterator end() const { return ids_.data() + ids_.size(); }
  const QueryId& front() const { return ids_[head_]; }
  const QueryId& back() const { return ids_.back(); }
  const QueryId& operator[](size_type i) const { return ids_[head_ + i]; }
  // How many ids the storage holds before it grows (its space before the start included).
  size_type capacity() const { return ids_.capacity(); }

  void push_back(QueryId id) {
    // Full: take back the space before the start when it is at least half (amortised O(1): the
    // ids moved are no more than the pushes that space then takes without moving anything).
    if (ids_.size() == ids_.capacity() && head_ > 0 && 2 * head_ >= ids_.size()) compact();
    ids_.push_back(id);
  }
  void pop_front() {
    if (++head_ == ids_.size()) clear();
  }
  // Removes the id if it is queued (the first occurrence); searched from the front, where
  // policies mostly take from.
  bool erase(QueryId id) {
    const auto it = std::find(ids_.begin() + head_, ids_.end(), id);
    if (it == ids_.end()) return false;
    if (it == ids_.begin() + head_) {
      pop_front();
    } else {
      ids_.erase(it);
    }
    return true;
  }
  void clear() {
    ids_.clear();
    head_ = 0;
  }

 private:
  void compact() {
    ids_.erase(ids_.begin(), ids_.begin() + head_);
    head_ = 0;
  }

  // Four ids inline: with the vector's pointer, size and capacity and the start index, 64 bytes.
  boost::container::small_vector<QueryId, 4> ids_;
  std::size_t head_ = 0;  // ids_[head_] is the oldest
};

static_assert(sizeof(QueryQueue) == 64, "a worker's queue is meant to fill one cache line");

}  // namespace servelab::sched
