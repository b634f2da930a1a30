#include "adi/mpi/halo.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "adi/base/env_switch.hpp"
#include "adi/mpi/nccl_transport.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/halo_planes.hpp"

namespace adi::mpi {

namespace dev = cuda_backend::halo;

template <class T>
LocalField<T>::LocalField(const Decomposition& dec, std::array<int, 3> ghosts, const Executor& exec)
    : ghosts_(ghosts), exec_(exec) {
  for (int g : ghosts) detail::require(g >= 0 && g <= 8, "LocalField: ghost widths must be in 0..8");
  const index_t ex = dec.extent(Axis::x), ey = dec.extent(Axis::y), ez = dec.extent(Axis::z);
  const index_t ax = ex + 2 * ghosts[0], ay = ey + 2 * ghosts[1], az = ez + 2 * ghosts[2];
  all_ = Box3::dense(ax, ay, az);
  offset_ = ghosts[0] + ghosts[1] * all_.sy + ghosts[2] * all_.sz;
  interior_ = Box3{ex, ey, ez, all_.sy, all_.sz};
  if (on_device()) {
    const cuda_backend::DeviceGuard guard(exec.device());  // the caller's device back on return
    device_ = Array<T>(all_.size(), exec);
    cuda_backend::memset_zero_async(device_.data(), std::size_t(all_.size()) * sizeof(T), exec.stream());
  } else {
    storage_.assign(std::size_t(all_.size()), T(0));
  }
}

template <class T>
LocalField<T>::LocalField(const LocalField& o)
    : ghosts_(o.ghosts_), all_(o.all_), interior_(o.interior_), offset_(o.offset_), exec_(o.exec_),
      storage_(o.storage_) {
  if (o.on_device()) {
    device_ = Array<T>(all_.size(), exec_);
    copy_from(o);
  }
}

template <class T>
LocalField<T>& LocalField<T>::operator=(const LocalField& o) {
  if (this != &o) *this = LocalField(o);
  return *this;
}

template <class T>
void LocalField<T>::copy_to_host(T* dst) const {
  detail::copy_bytes(dst, MemorySpace::host, data(), exec_.memory_space(), std::size_t(all_.size()) * sizeof(T),
                     exec_.stream());
}

template <class T>
void LocalField<T>::copy_from_host(const T* src) {
  detail::copy_bytes(data(), exec_.memory_space(), src, MemorySpace::host, std::size_t(all_.size()) * sizeof(T),
                     exec_.stream());
}

// The interior of a device field is not contiguous: these go through a host image of
// the whole allocation (helpers for set-up and output, not for the time loop).
// Copies the interior rows between a storage-order image and a dense array.
template <class T>
static void copy_rows(const LocalField<T>& f, T* image, T* dense, bool to_dense) {
  const Box3& in = f.interior();
  std::size_t q = 0;
  for (index_t k = 0; k < in.nz; ++k)
    for (index_t j = 0; j < in.ny; ++j, q += std::size_t(in.nx)) {
      T* row = image + f.index(0, j, k);
      if (to_dense)
        std::memcpy(dense + q, row, std::size_t(in.nx) * sizeof(T));
      else
        std::memcpy(row, dense + q, std::size_t(in.nx) * sizeof(T));
    }
}

template <class T>
void LocalField<T>::copy_interior_to_host(T* dst) const {
  std::vector<T> img;
  if (on_device()) {
    img.resize(std::size_t(all_.size()));
    copy_to_host(img.data());
  }
  copy_rows(*this, on_device() ? img.data() : const_cast<T*>(data()), dst, true);
}

template <class T>
void LocalField<T>::copy_interior_from_host(const T* src) {
  std::vector<T> img;
  if (on_device()) {
    img.resize(std::size_t(all_.size()));
    copy_to_host(img.data());
  }
  copy_rows(*this, on_device() ? img.data() : data(), const_cast<T*>(src), false);
  if (on_device()) copy_from_host(img.data());
}

template <class T>
LocalField<T> LocalField<T>::to_host() const {
  LocalField h;
  h.ghosts_ = ghosts_;
  h.all_ = all_;
  h.interior_ = interior_;
  h.offset_ = offset_;
  h.storage_.resize(std::size_t(all_.size()));
  copy_to_host(h.storage_.data());
  return h;
}

template <class T>
void LocalField<T>::copy_from(const LocalField& o) {
  detail::require(o.all_.nx == all_.nx && o.all_.ny == all_.ny && o.all_.nz == all_.nz && o.ghosts_ == ghosts_,
                  "LocalField::copy_from: the fields differ in shape (extents or ghost widths)");
  detail::copy_bytes(data(), exec_.memory_space(), o.data(), o.exec_.memory_space(),
                     std::size_t(all_.size()) * sizeof(T), on_device() ? exec_.stream() : o.exec_.stream());
}

template <class T>
HaloExchange<T>::HaloExchange(const ProcessGrid& procs, const LocalField<T>& f, Transport transport)
    : procs_(&procs), all_(f.allocated()), exec_(f.executor()) {
  const auto g = f.ghosts();
  int g0[3] = {g[0], g[1], g[2]};
  check_mpi(MPI_Bcast(g0, 3, MPI_INT, 0, procs.comm()), "MPI_Bcast");
  agree(procs.comm(), g0[0] == g[0] && g0[1] == g[1] && g0[2] == g[2], "HaloExchange: ghost widths differ from rank 0's");
  for (int a = 0; a < 3; ++a) {
    ghosts_[a] = {g[a], g[a]};
    if (g[a] == 0) continue;
    const index_t e = all_.extent(Axis(a)) - 2 * g[a];
    agree(procs.comm(), e >= g[a],
          std::string("HaloExchange: ") + detail::number(e) + " node(s) along " + axis_name(Axis(a)) +
              " are fewer than the ghost width " + detail::number(g[a]));
  }
  setup(f.executor(), transport);
}

template <class T>
HaloExchange<T>::HaloExchange(const ProcessGrid& procs, const Box3& all,
                              const std::array<std::array<int, 2>, 3>& ghosts, const Executor& exec,
                              Transport transport)
    : procs_(&procs), ghosts_(ghosts), all_(all), exec_(exec) {
  setup(exec, transport);
}

namespace {

// Collective over procs.comm() (every rank, the same answer): the transport of a device
// halo exchange, with the NCCL communicator of each split axis when it is NCCL.
Transport halo_transport(const ProcessGrid& procs, int device, Transport want,
                         std::array<std::shared_ptr<nccl::Communicator>, 3>& comms) {
  const std::string pre = std::string("HaloExchange: transport ") + transport_name(want) + ": ";
  bool split = false;
  for (int a = 0; a < 3; ++a) split = split || procs.dims(Axis(a)) > 1;
  std::string shared;
  if (split && nccl::built() && (want == Transport::automatic || want == Transport::nccl))
    shared = nccl::shared_gpu_report(procs.comm(), device);  // collective: every rank or none
  Transport t = Transport::host_staging;
  std::string err;
  switch (want) {
    case Transport::automatic:
      t = split && nccl::built() && shared.empty() ? Transport::nccl : Transport::host_staging;
      break;
    case Transport::host_staging: break;
    case Transport::cuda_aware_mpi: {
      t = want;
      const int here = cuda_aware() ? 1 : 0;
      int all = 0;
      check_mpi(MPI_Allreduce(&here, &all, 1, MPI_INT, MPI_MIN, procs.comm()), "MPI_Allreduce");
      if (!all) err = pre + "this MPI library does not take device pointers (" + cuda_aware_report() + ")";
      break;
    }
    case Transport::nccl:
      t = want;
      if (!nccl::built())
        err = pre + "adi::mpi was built without NCCL (configure with -DADI_WITH_NCCL=ON)";
      else if (!shared.empty())
        err = pre + shared;
      break;
  }
  agree_supported(procs.comm(), err.empty(), err);
  if (t == Transport::nccl)
    for (int a = 0; a < 3; ++a)
      if (procs.dims(Axis(a)) > 1) comms[std::size_t(a)] = nccl::axis_communicator(procs, Axis(a), device);
  return t;
}

}  // namespace

template <class T>
void HaloExchange<T>::setup(const Executor& exec, Transport want) {
  index_t most = 0;
  for (int a = 0; a < 3; ++a) {
    const int w = std::max(ghosts_[a][0], ghosts_[a][1]);
    if (w > 0) most = std::max(most, dev::slab_count(all_, a, w));
  }
  if (exec.is_cuda()) {
    device_ = true;
    transport_ = halo_transport(*procs_, exec.device(), want, nccl_);
    {  // (every rank the same grouping: the NCCL calls of neighbours must match)
      int mine = detail::env_switch("ADI_HALO_ONE_GROUP", true) ? 1 : 0, all = 0;
      check_mpi(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, procs_->comm()), "MPI_Allreduce");
      one_group_ = all != 0;
    }
    const cuda_backend::DeviceGuard guard(exec.device());  // the pinned buffer belongs to this GPU's context
    dbuf_ = Array<T>(std::max<index_t>(4 * most, 1), exec);
    pinned_ = std::shared_ptr<T>(static_cast<T*>(dev::pinned_alloc(std::size_t(4 * most) * sizeof(T))),
                                 [](T* p) { dev::pinned_free(p); });
    return;
  }
  send_lo_.resize(std::size_t(most));
  send_hi_.resize(std::size_t(most));
  recv_lo_.resize(std::size_t(most));
  recv_hi_.resize(std::size_t(most));
}

// Per axis: pack both owned slabs on the device, move them by the transport (NCCL on the
// stream; MPI on the device slabs; or staged through page-locked memory), unpack. An axis
// with the rank itself on both sides (periodic, not split) wraps on the device; one with no
// neighbour is skipped.
template <class T>
void HaloExchange<T>::exchange_device(T* data) {
  void* stream = exec_.stream();
  const cuda_backend::DeviceGuard guard(exec_.device());
  for (int a = 0; a < 3; ++a) {
    const int gl = ghosts_[a][0], gh = ghosts_[a][1], g = std::max(gl, gh);
    if (g == 0) continue;
    const Axis ax = Axis(a);
    const int lo = procs_->neighbor(ax, false), hi = procs_->neighbor(ax, true);
    if (lo == MPI_PROC_NULL && hi == MPI_PROC_NULL) continue;
    const index_t n = all_.extent(ax);
    const index_t count = dev::slab_count(all_, a, g);
    T* dsend = dbuf_.data();
    T* drecv = dsend + 2 * count;
    const bool self = lo == procs_->rank() && hi == procs_->rank();
    // (a side without a neighbour sends nothing: its slab is not packed; at a split axis's
    // ends, one of the two pack kernels of each exchange)
    if (self || lo != MPI_PROC_NULL) dev::pack_slab<T>(data, all_, a, gl, g, dsend, stream);  // first owned -> lower
    if (self || hi != MPI_PROC_NULL)
      dev::pack_slab<T>(data, all_, a, n - gh - g, g, dsend + count, stream);  // last owned planes -> upper
    if (self) {
      // Our own first slab is our high ghosts, our last slab our low ghosts.
      dev::unpack_slab<T>(data, all_, a, n - gh, g, dsend, stream);
      dev::unpack_slab<T>(data, all_, a, 0, g, dsend + count, stream);
      continue;
    }
    if (transport_ == Transport::nccl) {
      // Ranks of the axis's communicator (its coordinate); -1: no neighbour on that side.
      const int P = procs_->dims(ax), me = procs_->coord(ax);
      const int to_lo = lo == MPI_PROC_NULL ? -1 : (me - 1 + P) % P;
      const int to_hi = hi == MPI_PROC_NULL ? -1 : (me + 1) % P;
      const std::size_t one = std::size_t(count) * sizeof(T);
      nccl::Communicator& nc = *nccl_[std::size_t(a)];
      if (one_group_) {
        nccl::neighbour_exchange(nc, dsend, drecv, to_lo, dsend + count, drecv + count, to_hi, one, stream);
      } else {
        nccl::send_recv(nc, dsend, to_lo, drecv + count, to_hi, one, stream);  // first owned -> lower
        nccl::send_recv(nc, dsend + count, to_hi, drecv, to_lo, one, stream);  // last owned -> upper
      }
    } else if (transport_ == Transport::cuda_aware_mpi) {
      cuda_backend::synchronize(stream);  // MPI reads the packed slabs
      send_recv(dsend, drecv, count, lo, hi, a);
    } else {
      stage(dsend, drecv, count, lo, hi, a);
    }
    if (lo != MPI_PROC_NULL) dev::unpack_slab<T>(data, all_, a, 0, g, drecv, stream);
    if (hi != MPI_PROC_NULL) dev::unpack_slab<T>(data, all_, a, n - gh, g, drecv + count, stream);
  }
}

// The two MPI_Sendrecv of axis a's packed slabs (send: first owned | last owned; recv: low
// ghosts | high ghosts, `count` values each), in memory MPI can read.
template <class T>
void HaloExchange<T>::send_recv(const T* send, T* recv, index_t count, int lo, int hi, int a) const {
  MPI_Comm c = procs_->comm();
  const MPI_Datatype type = mpi_type<T>();
  check_mpi(MPI_Sendrecv(send, int(count), type, lo, 10 + a, recv + count, int(count), type, hi, 10 + a, c,
                         MPI_STATUS_IGNORE),
            "MPI_Sendrecv");
  check_mpi(MPI_Sendrecv(send + count, int(count), type, hi, 20 + a, recv, int(count), type, lo, 20 + a, c,
                         MPI_STATUS_IGNORE),
            "MPI_Sendrecv");
}

// Host staging of one axis's packed slabs: to page-locked memory, MPI, back to the device.
template <class T>
void HaloExchange<T>::stage(const T* dsend, T* drecv, index_t count, int lo, int hi, int a) {
  void* stream = exec_.stream();
  T* hsend = pinned_.get();
  T* hrecv = hsend + 2 * count;
  const std::size_t bytes = std::size_t(2 * count) * sizeof(T);
  cuda_backend::copy_on_stream(hsend, dsend, bytes, cuda_backend::Copy::device_to_host, stream);
  cuda_backend::synchronize(stream);
  send_recv(hsend, hrecv, count, lo, hi, a);
  cuda_backend::copy_on_stream(drecv, hrecv, bytes, cuda_backend::Copy::host_to_device, stream);
}

template <class T>
void HaloExchange<T>::exchange(LocalField<T>& f) {
  detail::require(f.on_device() == device_ && f.allocated().nx == all_.nx && f.allocated().ny == all_.ny &&
                      f.allocated().nz == all_.nz,
                  "HaloExchange::exchange: the field differs in shape or memory space from the one the "
                  "exchange was built for");
  exchange(f.data());
}

template <class T>
void HaloExchange<T>::exchange(T* data) {
  if (device_) {
    exchange_device(data);
    return;
  }
  const Box3& b = all_;
  for (int a = 0; a < 3; ++a) {
    const int gl = ghosts_[a][0], gh = ghosts_[a][1], g = std::max(gl, gh);
    if (g == 0) continue;
    const Axis ax = Axis(a);
    const index_t n = b.extent(ax), st = b.stride(ax);
    // The slab of `g` planes along a starting at plane p, over the whole allocation of
    // the other axes (their ghosts included, so edges and corners travel too).
    const int o1 = a == 0 ? 1 : 0, o2 = a == 2 ? 1 : 2;
    const index_t n1 = b.extent(Axis(o1)), n2 = b.extent(Axis(o2)), s1 = b.stride(Axis(o1)),
                  s2 = b.stride(Axis(o2));
    auto copy = [&](index_t p, T* buf, bool pack) {
      index_t q = 0;
      for (index_t t = 0; t < g; ++t)
        for (index_t k = 0; k < n2; ++k)
          for (index_t j = 0; j < n1; ++j, ++q) {
            T& x = data[(p + t) * st + j * s1 + k * s2];
            if (pack) buf[q] = x; else x = buf[q];
          }
      return q;
    };
    const index_t count = copy(gl, send_lo_.data(), true);  // first owned planes -> lower neighbour
    copy(n - gh - g, send_hi_.data(), true);                // last owned planes -> upper neighbour
    const int lo = procs_->neighbor(ax, false), hi = procs_->neighbor(ax, true);
    const MPI_Datatype type = mpi_type<T>();
    MPI_Comm c = procs_->comm();
    check_mpi(MPI_Sendrecv(send_lo_.data(), int(count), type, lo, 10 + a, recv_hi_.data(), int(count), type, hi,
                           10 + a, c, MPI_STATUS_IGNORE),
              "MPI_Sendrecv");
    check_mpi(MPI_Sendrecv(send_hi_.data(), int(count), type, hi, 20 + a, recv_lo_.data(), int(count), type, lo,
                           20 + a, c, MPI_STATUS_IGNORE),
              "MPI_Sendrecv");
    if (lo != MPI_PROC_NULL) copy(0, recv_lo_.data(), false);
    if (hi != MPI_PROC_NULL) copy(n - gh, recv_hi_.data(), false);
  }
}

template class LocalField<float>;
template class LocalField<double>;
template class HaloExchange<float>;
template class HaloExchange<double>;

}  // namespace adi::mpi
