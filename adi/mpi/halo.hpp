#pragma once
// A rank's piece of a distributed field with ghost layers, and the halo exchange that
// fills them from the neighbouring ranks (periodic axes wrap, also onto the rank
// itself when the axis is not split).
//
//   adi::mpi::LocalField<double> u(dec, {1, 1, 1});     // one ghost layer per side, every axis
//   u(i, j, k) = ...;                                    // this rank's nodes, i in [0, extent(x))
//   adi::mpi::HaloExchange<double> halo(procs, u);
//   halo.exchange(u);                                    // u(-1, j, k), u(nx, j, k), ... now valid
//
// Exchanges run axis after axis over the ghosted extents of the axes already done, so
// edge and corner ghosts are filled too (the mixed-derivative stencil reads them).
//
// Host or device memory (the executor's). A device field has no operator(): read and
// write it through copy_to_host / copy_from_host (whole allocation or interior), or
// to_host() / copy_from() with a host LocalField of the same shape:
//   adi::mpi::LocalField<double> d(dec, {1, 1, 1}, adi::Executor::cuda(dev));
//   adi::mpi::LocalField<double> h(dec, {1, 1, 1});  ... h(i, j, k) = ...;  d.copy_from(h);
// The device exchange packs the faces on the device (solvers/cuda/halo_planes.cu) and
// moves them by its transport (the constructors' `transport`; automatic = NCCL where adi
// is built with it and every rank has a GPU of its own, else host staging):
//   nccl:           NCCL sends / receives of the slabs on the executor's stream (the axis's
//                   communicator, shared with the line plans); no host copy, no host wait;
//   cuda_aware_mpi: MPI_Sendrecv of the device slabs (after a wait for the packing);
//   host_staging:   one copy into page-locked host buffers, the MPI_Sendrecv of the host
//                   exchange, one copy back (works with any MPI).
// A periodic axis that is not split wraps on the device without leaving it.
#include <array>
#include <memory>
#include <vector>

#include "adi/executor.hpp"
#include "adi/field.hpp"
#include "adi/mpi/decomposition.hpp"
#include "adi/mpi/distributed_tridiagonal.hpp"
#include "adi/mpi/process_grid.hpp"

namespace adi::mpi {

namespace nccl {
class Communicator;
}

template <class T>
class LocalField {
 public:
  LocalField() = default;
  // This rank's box of `dec` with ghosts[a] ghost layers on both sides of axis a, in
  // exec's memory (zero-filled).
  LocalField(const Decomposition& dec, std::array<int, 3> ghosts, const Executor& exec = Executor::host());
  // Copies are deep (a device field gets its own device memory).
  LocalField(const LocalField& other);
  LocalField& operator=(const LocalField& other);
  LocalField(LocalField&&) noexcept = default;
  LocalField& operator=(LocalField&&) noexcept = default;

  const Executor& executor() const { return exec_; }
  bool on_device() const { return exec_.is_cuda(); }

  const std::array<int, 3>& ghosts() const { return ghosts_; }
  index_t extent(Axis a) const { return interior_.extent(a); }
  // The interior (owned nodes) as a Box3 over data() + offset().
  const Box3& interior() const { return interior_; }
  index_t offset() const { return offset_; }
  T* interior_data() { return data() + offset_; }
  const T* interior_data() const { return data() + offset_; }
  // The whole allocation, ghosts included (in the executor's memory space).
  const Box3& allocated() const { return all_; }
  T* data() { return on_device() ? device_.data() : storage_.data(); }
  const T* data() const { return on_device() ? device_.data() : storage_.data(); }
  // Node (i, j, k) of this rank's box; -ghost .. extent+ghost-1 reach the ghosts.
  // Host fields only (unchecked, like Field::operator()).
  T& operator()(index_t i, index_t j, index_t k) { return storage_[std::size_t(index(i, j, k))]; }
  const T& operator()(index_t i, index_t j, index_t k) const { return storage_[std::size_t(index(i, j, k))]; }
  index_t index(index_t i, index_t j, index_t k) const { return offset_ + i + j * all_.sy + k * all_.sz; }

  // Host access for any memory space (synchronous, after the work queued on the
  // executor's stream). The whole allocation: allocated().size() values in storage order.
  void copy_to_host(T* dst) const;
  void copy_from_host(const T* src);
  // The interior only, as a dense extent(x) * extent(y) * extent(z) array (x fastest);
  // the ghosts are left as they are.
  void copy_interior_to_host(T* dst) const;
  void copy_interior_from_host(const T* src);
  // A host copy of this field (same shape, ghosts included).
  LocalField to_host() const;
  // Copies every value (ghosts included) from a field of the same shape, any memory space.
  void copy_from(const LocalField& other);

 private:
  std::array<int, 3> ghosts_{};
  Box3 all_{}, interior_{};
  index_t offset_ = 0;
  Executor exec_ = Executor::host();
  std::vector<T> storage_;  // host fields
  Array<T> device_;         // device fields
};

template <class T>
class HaloExchange {
 public:
  // Collective over procs.comm(): buffers for `f`'s shape. Every rank's field must have
  // the same ghost widths (checked, same error on every rank).
  // A device field (f.on_device()) gets device and page-locked host buffers; exchange()
  // then takes fields of that memory space only.
  // transport: how device slabs travel (see the top of this header; host fields ignore it).
  // An explicit nccl or cuda_aware_mpi this build or machine cannot run throws the same
  // Unsupported on every rank.
  HaloExchange(const ProcessGrid& procs, const LocalField<T>& f, Transport transport = Transport::automatic);
  // Collective: the same for any allocation `all` (e.g. an adi::Field's box) in exec's
  // memory with ghosts[a][side] ghost planes below / above the owned nodes of axis a (0
  // where there is no neighbouring rank on that side; the two widths of an axis equal
  // where both are > 0, and equal the neighbours' widths).
  HaloExchange(const ProcessGrid& procs, const Box3& all, const std::array<std::array<int, 2>, 3>& ghosts,
               const Executor& exec, Transport transport = Transport::automatic);
  // The transport device slabs take (host_staging, cuda_aware_mpi or nccl; host fields:
  // host_staging, i.e. plain MPI on host memory).
  Transport transport() const { return transport_; }
  // Collective: fills f's ghost layers along every axis with a ghost width > 0.
  // At a non-periodic end of the process grid the ghosts are left as they are.
  void exchange(LocalField<T>& f);
  // The same for the allocation of the second constructor (data in the executor's memory).
  void exchange(T* data);

 private:
  void setup(const Executor& exec, Transport want);
  void exchange_device(T* data);
  void stage(const T* dsend, T* drecv, index_t count, int lo, int hi, int a);
  void send_recv(const T* send, T* recv, index_t count, int lo, int hi, int a) const;
  const ProcessGrid* procs_;
  std::array<std::array<int, 2>, 3> ghosts_{};
  Box3 all_{};
  Executor exec_ = Executor::host();
  std::vector<T> send_lo_, send_hi_, recv_lo_, recv_hi_;
  // Device fields: send | recv slabs on the device (4 x the largest slab) and their
  // page-locked host copies.
  bool device_ = false;
  Transport transport_ = Transport::host_staging;
  std::array<std::shared_ptr<nccl::Communicator>, 3> nccl_;  // per split axis (transport nccl)
  // ADI_HALO_ONE_GROUP (stop 39, h-splitwait; on by default since stop 40, =0 two groups): an axis's two
  // NCCL send/receive pairs as one NCCL group (nccl::neighbour_exchange: one launch, not two).
  bool one_group_ = false;
  Array<T> dbuf_;
  std::shared_ptr<T> pinned_;
};

extern template class LocalField<float>;
extern template class LocalField<double>;
extern template class HaloExchange<float>;
extern template class HaloExchange<double>;

}  // namespace adi::mpi
