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
// Host memory.
#include <array>
#include <vector>

#include "adi/field.hpp"
#include "adi/mpi/decomposition.hpp"
#include "adi/mpi/process_grid.hpp"

namespace adi::mpi {

template <class T>
class LocalField {
 public:
  LocalField() = default;
  // This rank's box of `dec` with ghosts[a] ghost layers on both sides of axis a.
  LocalField(const Decomposition& dec, std::array<int, 3> ghosts);

  const std::array<int, 3>& ghosts() const { return ghosts_; }
  index_t extent(Axis a) const { return interior_.extent(a); }
  // The interior (owned nodes) as a Box3 over data() + offset().
  const Box3& interior() const { return interior_; }
  index_t offset() const { return offset_; }
  T* interior_data() { return storage_.data() + offset_; }
  const T* interior_data() const { return storage_.data() + offset_; }
  // The whole allocation, ghosts included.
  const Box3& allocated() const { return all_; }
  T* data() { return storage_.data(); }
  const T* data() const { return storage_.data(); }
  // Node (i, j, k) of this rank's box; -ghost .. extent+ghost-1 reach the ghosts.
  T& operator()(index_t i, index_t j, index_t k) { return storage_[std::size_t(index(i, j, k))]; }
  const T& operator()(index_t i, index_t j, index_t k) const { return storage_[std::size_t(index(i, j, k))]; }
  index_t index(index_t i, index_t j, index_t k) const { return offset_ + i + j * all_.sy + k * all_.sz; }

 private:
  std::array<int, 3> ghosts_{};
  Box3 all_{}, interior_{};
  index_t offset_ = 0;
  std::vector<T> storage_;
};

template <class T>
class HaloExchange {
 public:
  // Collective over procs.comm(): buffers for `f`'s shape. Every rank's field must have
  // the same ghost widths (checked, same error on every rank).
  HaloExchange(const ProcessGrid& procs, const LocalField<T>& f);
  // Collective: fills f's ghost layers along every axis with a ghost width > 0.
  // At a non-periodic end of the process grid the ghosts are left as they are.
  void exchange(LocalField<T>& f);

 private:
  const ProcessGrid* procs_;
  std::array<int, 3> ghosts_{};
  Box3 all_{};
  std::vector<T> send_lo_, send_hi_, recv_lo_, recv_hi_;
};

extern template class LocalField<float>;
extern template class LocalField<double>;
extern template class HaloExchange<float>;
extern template class HaloExchange<double>;

}  // namespace adi::mpi
