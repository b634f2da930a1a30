#include "adi/mpi/process_grid.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "solvers/cuda/backend.hpp"

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI: MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support
#endif

namespace adi::mpi {

namespace {
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
}  // namespace

void check_mpi(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(std::string("MPI call ") + call + " failed: " + std::string(text, std::size_t(len)));
}

std::string agreed_message(MPI_Comm comm, bool ok, const std::string& message) {
  int size = 1, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  // The lowest failing rank (size when none) ...
  int mine = ok ? size : rank, first = size;
  check_mpi(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (first == size) return {};
  // ... broadcasts its message, so every rank throws the same text.
  int len = rank == first ? int(message.size()) : 0;
  check_mpi(MPI_Bcast(&len, 1, MPI_INT, first, comm), "MPI_Bcast");
  std::string text = rank == first ? message : std::string(std::size_t(len), ' ');
  if (len > 0) check_mpi(MPI_Bcast(text.data(), len, MPI_CHAR, first, comm), "MPI_Bcast");
  if (text.empty()) text = "failed";
  return size > 1 ? "rank " + detail::number(first) + ": " + text : text;
}

void agree(MPI_Comm comm, bool ok, const std::string& message) {
  const std::string text = agreed_message(comm, ok, message);
  if (!text.empty()) throw InvalidArgument(text);
}

void agree_supported(MPI_Comm comm, bool ok, const std::string& message) {
  const std::string text = agreed_message(comm, ok, message);
  if (!text.empty()) throw Unsupported(text);
}

void agree_no_error(MPI_Comm comm, const std::string& error_message) {
  agree(comm, error_message.empty(), error_message);
}

std::array<int, 3> parse_procs(const std::string& text) {
  std::array<int, 3> d{1, 1, 1};
  const std::string bad = "process grid '" + text + "' must be 1 to 3 positive counts joined by 'x' (e.g. 2x2x1)";
  std::size_t pos = 0;
  int axis = 0;
  while (true) {
    if (axis == 3) throw InvalidArgument(bad);
    std::size_t end = text.find('x', pos);
    const std::string part = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    if (part.empty() || part.size() > 6 || !std::all_of(part.begin(), part.end(), ::isdigit))
      throw InvalidArgument(bad);
    d[axis] = std::stoi(part);
    if (d[axis] < 1) throw InvalidArgument(bad);
    ++axis;
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return d;
}

std::array<int, 3> default_procs(int size, std::array<index_t, 3> extents) {
  int d[3] = {0, 0, 0};
  for (int a = 0; a < 3; ++a)
    if (extents[a] <= 1) d[a] = 1;
  check_mpi(MPI_Dims_create(size, 3, d), "MPI_Dims_create");
  return {d[0], d[1], d[2]};
}

ProcessGrid::ProcessGrid(MPI_Comm comm, std::array<int, 3> dims, std::array<bool, 3> periodic)
    : dims_(dims), periodic_(periodic) {
  MPI_Comm_size(comm, &size_);
  MPI_Comm_rank(comm, &rank_);
  // Every rank checks its own arguments and that they equal rank 0's, then all agree.
  int mine[6] = {dims[0], dims[1], dims[2], periodic[0], periodic[1], periodic[2]};
  int root[6];
  std::copy(mine, mine + 6, root);
  check_mpi(MPI_Bcast(root, 6, MPI_INT, 0, comm), "MPI_Bcast");
  std::string err;
  const long long product = 1LL * dims[0] * dims[1] * dims[2];
  if (dims[0] < 1 || dims[1] < 1 || dims[2] < 1)
    err = "process grid " + detail::number(dims[0]) + "x" + detail::number(dims[1]) + "x" + detail::number(dims[2]) +
          " has a count < 1";
  else if (product != size_)
    err = "process grid " + detail::number(dims[0]) + "x" + detail::number(dims[1]) + "x" + detail::number(dims[2]) +
          " holds " + detail::number(product) + " ranks but the communicator has " + detail::number(size_) +
          "; pick counts whose product is " + detail::number(size_);
  else if (!std::equal(mine, mine + 6, root))
    err = "process grid or periodic flags differ from rank 0's (every rank must pass the same)";
  agree(comm, err.empty(), err);

  int pd[3] = {periodic[0], periodic[1], periodic[2]};
  // reorder = 0: ranks keep their numbers, so a rank's piece of a file or of a test's
  // global array is the same whether or not the grid is used.
  check_mpi(MPI_Cart_create(comm, 3, dims_.data(), pd, 0, &cart_), "MPI_Cart_create");
  MPI_Comm_set_errhandler(cart_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(cart_, &rank_);
  check_mpi(MPI_Cart_coords(cart_, rank_, 3, coords_.data()), "MPI_Cart_coords");
  for (int a = 0; a < 3; ++a) {
    int keep[3] = {0, 0, 0};
    keep[a] = 1;
    check_mpi(MPI_Cart_sub(cart_, keep, &axis_[a]), "MPI_Cart_sub");
    MPI_Comm_set_errhandler(axis_[a], MPI_ERRORS_RETURN);
    check_mpi(MPI_Cart_shift(cart_, a, 1, &neighbors_[a][0], &neighbors_[a][1]), "MPI_Cart_shift");
  }
}

ProcessGrid::~ProcessGrid() {
  for (MPI_Comm& c : axis_)
    if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
  if (cart_ != MPI_COMM_NULL) MPI_Comm_free(&cart_);
}

std::string ProcessGrid::describe() const {
  return detail::number(dims_[0]) + "x" + detail::number(dims_[1]) + "x" + detail::number(dims_[2]);
}

const NetworkModel& ProcessGrid::network(Axis a) const {
  auto& slot = network_[int(a)];
  if (slot) return *slot;
  const double t_start = now();
  MPI_Comm c = axis_[int(a)];
  int p = 1, r = 0;
  MPI_Comm_size(c, &p);
  MPI_Comm_rank(c, &r);
  NetworkModel m;
  constexpr int reps = 9;
  // Small allreduce: the latency of a collective across the axis.
  std::vector<double> t;
  double x = 1, y = 0;
  for (int i = 0; i < reps + 2; ++i) {
    const double t0 = now();
    check_mpi(MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, c), "MPI_Allreduce");
    if (i >= 2) t.push_back(now() - t0);
  }
  m.latency = median(t);
  // Ring exchanges: small (latency) and 1 MiB (bandwidth).
  const int right = (r + 1) % p, left = (r + p - 1) % p;
  std::vector<char> sbuf(1 << 20, 1), rbuf(1 << 20);
  auto ring = [&](int bytes, int n) {
    std::vector<double> ts;
    for (int i = 0; i < n + 1; ++i) {
      check_mpi(MPI_Barrier(c), "MPI_Barrier");
      const double t0 = now();
      check_mpi(MPI_Sendrecv(sbuf.data(), bytes, MPI_BYTE, right, 7, rbuf.data(), bytes, MPI_BYTE, left, 7, c,
                             MPI_STATUS_IGNORE),
                "MPI_Sendrecv");
      if (i >= 1) ts.push_back(now() - t0);
    }
    return median(ts);
  };
  m.p2p_latency = ring(8, reps);
  const double tb = ring(1 << 20, 3);
  m.bandwidth = double(1 << 20) / std::max(tb - m.p2p_latency, 1e-9);
  // Host copy bandwidth (read + write counted once each: bytes moved = 2 * size).
  std::vector<char> src(4 << 20, 2), dst(4 << 20, 0);
  std::vector<double> tc;
  for (int i = 0; i < 3; ++i) {
    const double t0 = now();
    std::memcpy(dst.data(), src.data(), src.size());
    tc.push_back(now() - t0);
  }
  m.copy_bandwidth = 2.0 * double(src.size()) / std::max(median(tc), 1e-9);
  // Every rank of the axis uses the same numbers, so every rank picks the same strategy.
  double v[4] = {m.latency, m.p2p_latency, 1.0 / m.bandwidth, 1.0 / m.copy_bandwidth}, w[4];
  check_mpi(MPI_Allreduce(v, w, 4, MPI_DOUBLE, MPI_MAX, c), "MPI_Allreduce");
  m.latency = w[0];
  m.p2p_latency = w[1];
  m.bandwidth = 1.0 / w[2];
  m.copy_bandwidth = 1.0 / w[3];
  m.measure_seconds = now() - t_start;
  slot = std::make_unique<NetworkModel>(m);
  return *slot;
}

int node_local_rank(MPI_Comm comm) {
  MPI_Comm local;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local), "MPI_Comm_split_type");
  int lr = 0;
  MPI_Comm_rank(local, &lr);
  MPI_Comm_free(&local);
  return lr;
}

Executor rank_gpu(MPI_Comm comm) {
  const int lr = node_local_rank(comm);
  const int gpus = cuda_backend::device_count();
  agree_supported(comm, gpus > 0,
                  "no CUDA device on this rank (or adi was built without CUDA): device memory needs a GPU per node");
  const Executor e = Executor::cuda(lr % gpus);
  cuda_backend::set_device(e.device());  // every later copy and launch of this rank goes there
  return e;
}

bool cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  // Compiled-in support is not enough: the run-time query says whether it is on.
  return MPIX_CUDA_AWARE_SUPPORT && MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

std::string cuda_aware_report() {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  return "MPIX_CUDA_AWARE_SUPPORT = " + detail::number(MPIX_CUDA_AWARE_SUPPORT) +
         ", MPIX_Query_cuda_support() = " + detail::number(MPIX_Query_cuda_support());
#else
  return "this MPI has no MPIX_CUDA_AWARE_SUPPORT query (treated as not CUDA-aware)";
#endif
}

}  // namespace adi::mpi
