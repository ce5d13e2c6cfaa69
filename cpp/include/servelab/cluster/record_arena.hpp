// Memory for one run's record columns: one mapping for all of them, backed by 2 MB pages where
// Linux allows. With each column in its own heap block, a run of a million queries took about
// 9,000 page faults (a fifth of its time from Python): the smaller columns never span a whole
// aligned 2 MB page.
//
// A column gives its pages back when it is freed (its array dropped), not when the last one is:
// keeping one column of a run does not keep the others' memory (all but the 2 MB pages it shares
// with its neighbours). Pages go back lazily (the kernel takes them when it needs memory), and the
// last freed mapping of up to kMaxCachedBytes is kept for the next run, which then writes pages
// already mapped instead of faulting in zeroed ones.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace servelab::cluster {

class RecordArena {
 public:
  // An arena of at least `bytes`, or null where it would not pay (small) or the mapping fails: the
  // columns then take heap blocks as before.
  static std::shared_ptr<RecordArena> create(std::size_t bytes);
  ~RecordArena();
  RecordArena(const RecordArena&) = delete;
  RecordArena& operator=(const RecordArena&) = delete;

  // `bytes` from the arena, cache-line aligned, starting in a page no earlier block uses (so a
  // column's whole pages are its own) at an offset the last few blocks did not start at; null
  // when they do not fit what is left. Not thread-safe: one run's records are laid out by one
  // thread.
  void* take(std::size_t bytes);
  // Returns the whole pages of a block taken earlier to the system, lazily (its addresses stay the
  // arena's).
  void give_back(void* p, std::size_t bytes);
  bool owns(const void* p) const { return p >= base_ && p < base_ + size_; }
  const void* base() const { return base_; }

  // Below this many bytes in all, the columns stay on the heap (streamed runs, small runs).
  static constexpr std::size_t kMinBytes = std::size_t{4} << 20;
  // A freed arena up to this size is kept for the next run (about 3.5 million queries' records).
  static constexpr std::size_t kMaxCachedBytes = std::size_t{256} << 20;

 private:
  RecordArena(char* base, std::size_t size) : base_(base), size_(size) {}
  char* base_;
  std::size_t size_;
  std::size_t used_ = 0;
  std::size_t blocks_ = 0;
};

// The record columns' allocator: blocks from the run's arena while it has room, else the heap;
// new elements of trivial types are left unwritten (each cell is written once, when its query
// arrives or ends). A copy of a column goes to the heap, never into the run's arena.
template <typename T>
struct ColumnAllocator {
  using value_type = T;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using is_always_equal = std::false_type;

  ColumnAllocator() = default;
  explicit ColumnAllocator(std::shared_ptr<RecordArena> a) noexcept : arena(std::move(a)) {}
  template <typename U>
  ColumnAllocator(const ColumnAllocator<U>& other) noexcept : arena(other.arena) {}

  T* allocate(std::size_t n) {
    if (arena) {
      if (void* p = arena->take(n * sizeof(T))) return static_cast<T*>(p);
    }
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (arena && arena->owns(p)) {
      arena->give_back(p, n * sizeof(T));
    } else {
      std::allocator<T>().deallocate(p, n);
    }
  }
  ColumnAllocator select_on_container_copy_construction() const { return ColumnAllocator(); }

  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }

  // Equal when either can free the other's blocks: each frees heap blocks, and arena blocks only
  // through an allocator of that arena.
  template <typename U>
  friend bool operator==(const ColumnAllocator& a, const ColumnAllocator<U>& b) noexcept {
    return a.arena == b.arena;
  }

  std::shared_ptr<RecordArena> arena;
};

}  // namespace servelab::cluster
