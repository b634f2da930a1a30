#pragma once
// Field<T>: values on a grid's nodes in host or device memory, x fastest,
// rows padded to 128 bytes (64 for rows of at most 64 bytes) on storage aligned to 128 bytes,
// so every row starts on a whole 128-byte line (aligned SIMD loads, coalesced GPU rows).
// The memory space is a value taken from the executor.
#include <cstddef>
#include <memory>

#include "adi/executor.hpp"
#include "adi/grid.hpp"
#include "adi/layout.hpp"

namespace adi {

namespace detail {
// The row alignment of every Field, in bytes: 128 (stop 39, measured: docs/mpi.md "Stop 39"), or
// 64 where the environment says ADI_FIELD_ROW_ALIGN=64 (read once per process; 128 or unset: 128;
// any other value: InvalidArgument naming the variable).
std::size_t row_align_bytes();
// Raw aligned storage in one memory space; frees itself.
class Storage {
 public:
  Storage() = default;
  Storage(std::size_t bytes, const Executor& exec);
  void* get() const { return ptr_.get(); }
  std::size_t bytes() const { return bytes_; }

 private:
  std::shared_ptr<void> ptr_;
  std::size_t bytes_ = 0;
};
// Copies bytes between any two memory spaces (synchronous). A copy that involves the
// device goes on `stream` (a cudaStream_t; null: the default stream), after the work
// already queued there.
void copy_bytes(void* dst, MemorySpace dst_space, const void* src, MemorySpace src_space,
                std::size_t bytes, void* stream = nullptr);
}  // namespace detail

// A 1D array of n values in exec's memory space: the simplest way to hand device
// arrays to the solvers without touching CUDA yourself.
template <class T>
class Array {
 public:
  Array() = default;
  Array(index_t n, const Executor& exec = Executor::host())
      : n_(checked_length(n)), exec_(exec), storage_(static_cast<std::size_t>(n) * sizeof(T), exec) {}
  T* data() { return static_cast<T*>(storage_.get()); }
  const T* data() const { return static_cast<const T*>(storage_.get()); }
  index_t size() const { return n_; }
  const Executor& executor() const { return exec_; }
  // Copies size() values from / to host memory (on the executor's stream, after the work
  // queued there; returns when the copy is done).
  void copy_from_host(const T* src) {
    detail::copy_bytes(data(), exec_.memory_space(), src, MemorySpace::host, bytes(), exec_.stream());
  }
  void copy_to_host(T* dst) const {
    detail::copy_bytes(dst, MemorySpace::host, data(), exec_.memory_space(), bytes(), exec_.stream());
  }

 private:
  static index_t checked_length(index_t n) {
    detail::require(n >= 0 && n <= (index_t(1) << 56) / index_t(sizeof(T)),
                    "Array: length " + std::to_string(n) + " must be >= 0 and fit in memory (at most 2^56 bytes)");
    return n;
  }
  std::size_t bytes() const { return static_cast<std::size_t>(n_) * sizeof(T); }
  index_t n_ = 0;
  Executor exec_ = Executor::host();
  detail::Storage storage_;
};

template <class T>
class Field {
 public:
  Field() = default;
  // Allocates nx*ny*nz values (padded rows) in exec's memory space, zero-filled.
  Field(index_t nx, index_t ny, index_t nz, const Executor& exec = Executor::host());
  explicit Field(const Grid& g, const Executor& exec = Executor::host())
      : Field(g.nx(), g.ny(), g.nz(), exec) {}

  // Row pitch in elements: nx rounded up to a multiple of 128 bytes (detail::row_align_bytes();
  // 64 with ADI_FIELD_ROW_ALIGN=64), so that every row of a device field starts on a 128-byte
  // line, as rows of 512 values always do; with 64-byte padding an x-split piece's 513 values
  // per row start at alternating 64-byte offsets, which cost its y / z stages ~25% (stop 39,
  // 2 x H200: weak x 81% -> 91%; docs/mpi.md).
  // Rows of at most 64 bytes keep 64-byte padding (a 128-byte line would double a narrow
  // field's memory; such rows gain nothing from it).
  static index_t padded_row(index_t nx) {
    const std::size_t align = nx * sizeof(T) <= 64 ? std::size_t(64) : detail::row_align_bytes();
    const index_t w = static_cast<index_t>(align / sizeof(T));
    return (nx + w - 1) / w * w;
  }

  const Box3& box() const { return box_; }
  index_t nx() const { return box_.nx; }
  index_t ny() const { return box_.ny; }
  index_t nz() const { return box_.nz; }
  index_t size() const { return box_.size(); }
  index_t index(index_t i, index_t j, index_t k) const { return i + j * box_.sy + k * box_.sz; }
  T* data() { return static_cast<T*>(storage_.get()); }
  const T* data() const { return static_cast<const T*>(storage_.get()); }
  const Executor& executor() const { return exec_; }
  MemorySpace memory_space() const { return exec_.memory_space(); }
  bool empty() const { return storage_.get() == nullptr; }

  // Element access, host fields only (unchecked, like std::vector::operator[]).
  T& operator()(index_t i, index_t j, index_t k) { return data()[index(i, j, k)]; }
  const T& operator()(index_t i, index_t j, index_t k) const { return data()[index(i, j, k)]; }

  // Copies values (and padding) from another field of the same extents, any memory space;
  // on the device executor's stream (this field's when both are device fields).
  void copy_from(const Field& other);
  // A copy of this field in host memory.
  Field to_host() const;
  // Sets every value (host or device).
  void fill(T value);

 private:
  Box3 box_{};
  Executor exec_ = Executor::host();
  detail::Storage storage_;
};

extern template class Field<float>;
extern template class Field<double>;

}  // namespace adi
