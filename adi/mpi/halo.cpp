#include "adi/mpi/halo.hpp"

#include <algorithm>
#include <string>

namespace adi::mpi {

template <class T>
LocalField<T>::LocalField(const Decomposition& dec, std::array<int, 3> ghosts) : ghosts_(ghosts) {
  for (int g : ghosts) detail::require(g >= 0 && g <= 8, "LocalField: ghost widths must be in 0..8");
  const index_t ex = dec.extent(Axis::x), ey = dec.extent(Axis::y), ez = dec.extent(Axis::z);
  const index_t ax = ex + 2 * ghosts[0], ay = ey + 2 * ghosts[1], az = ez + 2 * ghosts[2];
  all_ = Box3::dense(ax, ay, az);
  offset_ = ghosts[0] + ghosts[1] * all_.sy + ghosts[2] * all_.sz;
  interior_ = Box3{ex, ey, ez, all_.sy, all_.sz};
  storage_.assign(std::size_t(all_.size()), T(0));
}

template <class T>
HaloExchange<T>::HaloExchange(const ProcessGrid& procs, const LocalField<T>& f)
    : procs_(&procs), ghosts_(f.ghosts()), all_(f.allocated()) {
  int g[3] = {ghosts_[0], ghosts_[1], ghosts_[2]}, g0[3] = {g[0], g[1], g[2]};
  check_mpi(MPI_Bcast(g0, 3, MPI_INT, 0, procs.comm()), "MPI_Bcast");
  agree(procs.comm(), std::equal(g, g + 3, g0), "HaloExchange: ghost widths differ from rank 0's");
  index_t most = 0;
  for (int a = 0; a < 3; ++a) {
    if (ghosts_[a] == 0) continue;
    const index_t face = all_.size() / all_.extent(Axis(a)) * ghosts_[a];
    most = std::max(most, face);
    const index_t e = all_.extent(Axis(a)) - 2 * ghosts_[a];
    agree(procs.comm(), e >= ghosts_[a],
          std::string("HaloExchange: ") + std::to_string(e) + " node(s) along " + axis_name(Axis(a)) +
              " are fewer than the ghost width " + std::to_string(ghosts_[a]));
  }
  send_lo_.resize(std::size_t(most));
  send_hi_.resize(std::size_t(most));
  recv_lo_.resize(std::size_t(most));
  recv_hi_.resize(std::size_t(most));
}

template <class T>
void HaloExchange<T>::exchange(LocalField<T>& f) {
  const Box3& b = all_;
  T* data = f.data();
  for (int a = 0; a < 3; ++a) {
    const int g = ghosts_[a];
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
    const index_t count = copy(g, send_lo_.data(), true);  // first owned planes -> lower neighbour
    copy(n - 2 * g, send_hi_.data(), true);                // last owned planes -> upper neighbour
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
    if (hi != MPI_PROC_NULL) copy(n - g, recv_hi_.data(), false);
  }
}

template class LocalField<float>;
template class LocalField<double>;
template class HaloExchange<float>;
template class HaloExchange<double>;

}  // namespace adi::mpi
