// Device block partition passes, double precision (see block_partition_local_passes.hpp).
#include "solvers/cuda/block_partition_launch.cuh"

namespace adi::cuda_backend::block_partition {

template void reduce<double>(const BlockLineSet&, const double*, const double*, const double*, const double*, double*,
                             const Workspace<double>&, double*, double, bool, bool, void*);
template void back_substitute<double>(const BlockLineSet&, const Workspace<double>&, const double*, double*, void*);

}  // namespace adi::cuda_backend::block_partition
