#include "adi/field.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "adi/base/env_switch.hpp"
#include "adi/detail/allocation_count.hpp"
#include "adi/error.hpp"
#include "solvers/cuda/backend.hpp"

namespace adi {
namespace detail {

namespace {
std::atomic<std::size_t> g_storage_allocations{0};  // a diagnostic count, nothing depends on it
}  // namespace

std::size_t storage_allocation_count() { return g_storage_allocations.load(); }

std::size_t row_align_bytes() {
  static const std::size_t bytes = [] {
    return env_choice("ADI_FIELD_ROW_ALIGN", {"128", "64"}, 0) == 0 ? std::size_t(128) : std::size_t(64);
  }();
  return bytes;
}

Storage::Storage(std::size_t bytes, const Executor& exec) : bytes_(bytes) {
  if (bytes == 0) return;
  ++g_storage_allocations;
  if (exec.is_host()) {
    const std::size_t rounded = (bytes + 127) / 128 * 128;
    void* p = std::aligned_alloc(128, rounded);
    if (!p)
      throw Error("out of host memory allocating " + detail::number(double(bytes)) +
                  " bytes; use a smaller problem or a machine with more memory");
    std::memset(p, 0, rounded);
    ptr_ = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
  } else {
    void* p = cuda_backend::allocate(bytes, exec.device());
    // Zeroed on the executor's stream (not the legacy default stream), done when this returns.
    cuda_backend::DeviceGuard device_guard(exec.device());
    cuda_backend::memset_zero_async(p, bytes, exec.stream());
    cuda_backend::synchronize(exec.stream());
    ptr_ = std::shared_ptr<void>(p, [](void* q) { cuda_backend::deallocate(q); });
  }
}

void copy_bytes(void* dst, MemorySpace ds, const void* src, MemorySpace ss, std::size_t bytes, void* stream) {
  if (bytes == 0) return;
  if (ds == MemorySpace::host && ss == MemorySpace::host) {
    std::memcpy(dst, src, bytes);
    return;
  }
  using cuda_backend::Copy;
  const Copy kind = ds == MemorySpace::host ? Copy::device_to_host
                    : ss == MemorySpace::host ? Copy::host_to_device
                                              : Copy::device_to_device;
  cuda_backend::copy_on_stream(dst, src, bytes, kind, stream);
}

}  // namespace detail

template <class T>
Field<T>::Field(index_t nx, index_t ny, index_t nz, const Executor& exec) : exec_(exec) {
  detail::require(nx >= 1 && ny >= 1 && nz >= 1,
                  "Field: extents (" + detail::number(nx) + ", " + detail::number(ny) + ", " +
                      detail::number(nz) + ") must all be >= 1");
  const index_t sy = padded_row(nx);
  box_ = Box3{nx, ny, nz, sy, detail::mul_size(sy, ny, "Field")};
  validate(box_);  // a layout error, not an allocation failure, for sizes past the 64-bit range
  const index_t values = detail::mul_size(box_.sz, nz, "Field");
  detail::require(values <= (index_t(1) << 56) / index_t(sizeof(T)),
                  "Field: " + detail::number(nx) + " x " + detail::number(ny) + " x " + detail::number(nz) +
                      " values are more than any memory holds (over 2^56 bytes); use a smaller grid");
  storage_ = detail::Storage(static_cast<std::size_t>(values) * sizeof(T), exec);
}

template <class T>
void Field<T>::copy_from(const Field& other) {
  detail::require(other.nx() == nx() && other.ny() == ny() && other.nz() == nz(),
                  "Field::copy_from: extents differ (" + detail::number(other.nx()) + "x" +
                      detail::number(other.ny()) + "x" + detail::number(other.nz()) + " into " +
                      detail::number(nx()) + "x" + detail::number(ny()) + "x" + detail::number(nz()) + ")");
  // Both fields share the padded shape, so one contiguous copy moves everything.
  void* stream = exec_.is_cuda() ? exec_.stream() : other.executor().stream();
  detail::copy_bytes(data(), memory_space(), other.data(), other.memory_space(), storage_.bytes(), stream);
}

template <class T>
Field<T> Field<T>::to_host() const {
  Field<T> h(nx(), ny(), nz(), Executor::host());
  h.copy_from(*this);
  return h;
}

template <class T>
void Field<T>::fill(T value) {
  const std::size_t n = storage_.bytes() / sizeof(T);
  if (exec_.is_host()) {
    for (std::size_t i = 0; i < n; ++i) data()[i] = value;
  } else {
    std::vector<T> tmp(n, value);
    detail::copy_bytes(data(), MemorySpace::device, tmp.data(), MemorySpace::host, storage_.bytes(),
                       exec_.stream());
  }
}

template class Field<float>;
template class Field<double>;

}  // namespace adi
