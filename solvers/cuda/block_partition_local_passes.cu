// Device block partition passes, single precision (see block_partition_local_passes.hpp).
#include "solvers/cuda/block_partition_launch.cuh"

namespace adi::cuda_backend::block_partition {

template void reduce<float>(const BlockLineSet&, const float*, const float*, const float*, const float*, float*,
                             const Workspace<float>&, float*, float, bool, bool, void*);
template void back_substitute<float>(const BlockLineSet&, const Workspace<float>&, const float*, float*, void*);

}  // namespace adi::cuda_backend::block_partition
