#include "adi/mpi/vtk_series.hpp"

#include <cstdio>
#include <filesystem>
#include <type_traits>

namespace adi::mpi {

namespace {
std::string frame_stem(const std::string& name, long index) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "_%05ld", index);
  return name + buf;
}
}  // namespace

PvtiSeries::PvtiSeries(const ProcessGrid& procs, const Decomposition& dec, const Grid& grid, std::string directory,
                       std::string name)
    : procs_(&procs), grid_(grid), dir_(std::move(directory)), name_(std::move(name)) {
  pvd_ = (std::filesystem::path(dir_) / (name_ + ".pvd")).string();
  std::string err;
  if (procs.rank() == 0) {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec) err = "PvtiSeries: cannot create '" + dir_ + "': " + ec.message();
  }
  agree(procs.comm(), err.empty(), err);
  for (int a = 0; a < 3; ++a) {
    mine_.lo[a] = dec.lo(Axis(a));
    const index_t end = dec.lo(Axis(a)) + dec.extent(Axis(a));  // one past this rank's last node
    mine_.hi[a] = end < dec.global()[a] ? end : end - 1;        // + the neighbour's first layer
  }
  long long e[6] = {mine_.lo[0], mine_.lo[1], mine_.lo[2], mine_.hi[0], mine_.hi[1], mine_.hi[2]};
  std::vector<long long> all(std::size_t(6 * procs.size()));
  check_mpi(MPI_Allgather(e, 6, MPI_LONG_LONG, all.data(), 6, MPI_LONG_LONG, procs.comm()), "MPI_Allgather");
  for (int r = 0; r < procs.size(); ++r) {
    io::PieceExtent p;
    for (int a = 0; a < 3; ++a) {
      p.lo[a] = all[std::size_t(6 * r + a)];
      p.hi[a] = all[std::size_t(6 * r + 3 + a)];
    }
    all_.push_back(p);
  }
}

template <class T>
std::string PvtiSeries::write(const std::vector<std::pair<std::string, const LocalField<T>*>>& fields, double time,
                              long index) {
  const std::string stem = frame_stem(name_, index);
  char rank_text[16];
  std::snprintf(rank_text, sizeof rank_text, "_p%04d", procs_->rank());
  const std::string piece = stem + rank_text + ".vti";
  const std::string pvti = stem + ".pvti";
  std::string err;
  try {
    std::vector<io::PieceArray> arrays;
    for (const auto& [name, f] : fields) {
      detail::require(f != nullptr, "PvtiSeries::write: field '" + name + "' is null");
      for (int a = 0; a < 3; ++a)
        detail::require(mine_.hi[a] - mine_.lo[a] + 1 <= f->extent(Axis(a)) + f->ghosts()[a],
                        "PvtiSeries::write: field '" + name + "' needs a ghost layer along " + axis_name(Axis(a)));
      io::PieceArray p;
      p.name = name;
      if constexpr (std::is_same_v<T, double>) p.f64 = f->interior_data(); else p.f32 = f->interior_data();
      const Box3& in = f->interior();
      p.box = Box3{mine_.hi[0] - mine_.lo[0] + 1, mine_.hi[1] - mine_.lo[1] + 1, mine_.hi[2] - mine_.lo[2] + 1, in.sy,
                   in.sz};
      arrays.push_back(p);
    }
    io::write_vti_piece((std::filesystem::path(dir_) / piece).string(), grid_, mine_, arrays, time);
  } catch (const Error& e) {
    err = e.what();
  }
  agree(procs_->comm(), err.empty(), err);  // every piece is on disk before the .pvti names it
  if (procs_->rank() == 0) {
    try {
      std::vector<std::string> pieces;
      for (int r = 0; r < procs_->size(); ++r) {
        char t[16];
        std::snprintf(t, sizeof t, "_p%04d", r);
        pieces.push_back(stem + t + ".vti");
      }
      std::vector<std::pair<std::string, bool>> names;
      for (const auto& f : fields) names.emplace_back(f.first, std::is_same_v<T, double>);
      io::write_pvti((std::filesystem::path(dir_) / pvti).string(), grid_, all_, pieces, names);
      frames_.emplace_back(time, pvti);
      io::write_pvd(pvd_, frames_);
    } catch (const Error& e) {
      err = e.what();
    }
  } else {
    frames_.emplace_back(time, pvti);
  }
  agree(procs_->comm(), err.empty(), err);
  return (std::filesystem::path(dir_) / pvti).string();
}

template std::string PvtiSeries::write<float>(const std::vector<std::pair<std::string, const LocalField<float>*>>&,
                                              double, long);
template std::string PvtiSeries::write<double>(const std::vector<std::pair<std::string, const LocalField<double>*>>&,
                                               double, long);

}  // namespace adi::mpi
