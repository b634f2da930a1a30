#pragma once
// The scoped device guard every plan entry that touches a GPU opens first: it makes the
// plan's device (its executor's) current for the scope and gives the caller's current device
// back at the end, also when the scope is left by an exception. So a plan built or solved
// on Executor::cuda(1) never leaves its caller on GPU 1, and a kernel never runs on the
// device that happened to be current. Plain C++ (no CUDA header): the build without CUDA
// gets the same class, whose host paths never construct it with select = true.
//
//   cuda_backend::DeviceGuard guard(exec.device());        // CUDA paths
//   cuda_backend::DeviceGuard guard(exec.device(), exec.is_cuda());  // either backend
#include "solvers/cuda/kernel_list.hpp"

namespace adi::cuda_backend {
ADI_CUDA_KERNELS_BEGIN
ADI_CUDA_KERNEL(void set_device(int device))
ADI_CUDA_KERNEL(int current_device())
ADI_CUDA_KERNELS_END

// Selects `device` for its lifetime and restores the caller's current device afterwards.
// `select` false: does nothing (host paths of a function that may run on either). Selecting
// the device that is already current costs one cudaGetDevice and nothing on exit.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device, bool select = true) : active_(select) {
    if (!active_) return;
    previous_ = current_device();
    if (previous_ != device) set_device(device);
    else active_ = false;
  }
  ~DeviceGuard() {
    if (active_) try {
        set_device(previous_);
      } catch (...) {  // never throw from a destructor; the next call reports the device error
      }
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  bool active_;
  int previous_ = 0;
};

}  // namespace adi::cuda_backend
