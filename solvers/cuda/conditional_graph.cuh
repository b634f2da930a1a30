#pragma once
// A CUDA graph with one conditional IF node at its end, built by stream capture (CUDA >= 12.4):
//   [prefix: whatever `prefix(stream, handle)` enqueues, ending with a kernel that sets `handle`
//    (cudaGraphSetConditional)] -> IF { whatever `body(stream)` enqueues }
// captured on a private non-blocking stream (the caller's may be the legacy default stream, which
// cannot capture), in cudaStreamCaptureModeThreadLocal; instantiated and returned (the caller
// launches and destroys it). Throws DeviceError (ADI_CUDA_CHECK) where the toolkit, the driver or
// a captured call refuses, leaving nothing behind. Used by the large plan's device fall-back
// (partition_large.cu, stop 37) and the pivoting refinement's solve gate (pivoting_partition.cuh,
// pivoting_refine_graph_build). build_captured_graph: the same without the IF node (whatever
// `work(stream)` enqueues, as one graph).
#include <cuda_runtime.h>

#include "solvers/cuda/check.cuh"

#if CUDART_VERSION >= 12040
#define ADI_CUDA_CONDITIONAL_GRAPHS 1
#else
#define ADI_CUDA_CONDITIONAL_GRAPHS 0
#endif

namespace adi::cuda_backend {

template <class Work>
cudaGraphExec_t build_captured_graph(Work&& work) {
  cudaStream_t cs = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  bool capturing = false;
  try {
    ADI_CUDA_CHECK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    ADI_CUDA_CHECK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal));
    capturing = true;
    work(cs);
    capturing = false;
    ADI_CUDA_CHECK(cudaStreamEndCapture(cs, &graph));
    ADI_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  } catch (...) {
    if (capturing) {
      cudaGraph_t g = nullptr;
      (void)cudaStreamEndCapture(cs, &g);
      if (g != nullptr) (void)cudaGraphDestroy(g);
    }
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    if (cs != nullptr) (void)cudaStreamDestroy(cs);
    (void)cudaGetLastError();
    throw;
  }
  ADI_CUDA_CHECK(cudaGraphDestroy(graph));
  ADI_CUDA_CHECK(cudaStreamDestroy(cs));
  return exec;
}

#if ADI_CUDA_CONDITIONAL_GRAPHS
template <class Prefix, class Body>
cudaGraphExec_t build_if_graph(Prefix&& prefix, Body&& body) {
  cudaStream_t cs = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  bool capturing = false;
  try {
    ADI_CUDA_CHECK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    ADI_CUDA_CHECK(cudaGraphCreate(&graph, 0));
    cudaGraphConditionalHandle handle{};
    ADI_CUDA_CHECK(cudaGraphConditionalHandleCreate(&handle, graph, 0, cudaGraphCondAssignDefault));
    ADI_CUDA_CHECK(cudaStreamBeginCaptureToGraph(cs, graph, nullptr, nullptr, 0, cudaStreamCaptureModeThreadLocal));
    capturing = true;
    prefix(cs, handle);
    cudaStreamCaptureStatus status{};
    const cudaGraphNode_t* deps = nullptr;
    std::size_t ndeps = 0;
#if CUDART_VERSION >= 13000  // edge data in the capture API since CUDA 13 (12.x: the _v3 / _v2 names)
    ADI_CUDA_CHECK(cudaStreamGetCaptureInfo(cs, &status, nullptr, nullptr, &deps, nullptr, &ndeps));
#else
    ADI_CUDA_CHECK(cudaStreamGetCaptureInfo(cs, &status, nullptr, nullptr, &deps, &ndeps));
#endif
    cudaGraphNodeParams cp{};
    cp.type = cudaGraphNodeTypeConditional;
    cp.conditional.handle = handle;
    cp.conditional.type = cudaGraphCondTypeIf;
    cp.conditional.size = 1;
    cudaGraphNode_t node = nullptr;
#if CUDART_VERSION >= 13000
    ADI_CUDA_CHECK(cudaGraphAddNode(&node, graph, deps, nullptr, ndeps, &cp));
    ADI_CUDA_CHECK(cudaStreamUpdateCaptureDependencies(cs, &node, nullptr, 1, cudaStreamSetCaptureDependencies));
#else
    ADI_CUDA_CHECK(cudaGraphAddNode(&node, graph, deps, ndeps, &cp));
    ADI_CUDA_CHECK(cudaStreamUpdateCaptureDependencies(cs, &node, 1, cudaStreamSetCaptureDependencies));
#endif
    capturing = false;
    ADI_CUDA_CHECK(cudaStreamEndCapture(cs, &graph));
    cudaGraph_t if_body = cp.conditional.phGraph_out[0];
    ADI_CUDA_CHECK(cudaStreamBeginCaptureToGraph(cs, if_body, nullptr, nullptr, 0, cudaStreamCaptureModeThreadLocal));
    capturing = true;
    body(cs);
    capturing = false;
    ADI_CUDA_CHECK(cudaStreamEndCapture(cs, &if_body));
    ADI_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  } catch (...) {
    if (capturing) {
      cudaGraph_t g = nullptr;
      (void)cudaStreamEndCapture(cs, &g);
    }
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    if (cs != nullptr) (void)cudaStreamDestroy(cs);
    (void)cudaGetLastError();
    throw;
  }
  ADI_CUDA_CHECK(cudaGraphDestroy(graph));
  ADI_CUDA_CHECK(cudaStreamDestroy(cs));
  return exec;
}
#endif

}  // namespace adi::cuda_backend
