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

// A private non-blocking stream and the graph being captured on it: released on every path (an
// exception ends a capture in progress first and clears the error it leaves).
struct GraphCapture {
  cudaStream_t cs = nullptr;
  cudaGraph_t graph = nullptr;
  bool capturing = false;
  bool fresh = false;  // the capture in progress makes its own graph (not one we own already)
  bool failed = true;  // until finish()
  GraphCapture() { ADI_CUDA_CHECK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking)); }
  GraphCapture(const GraphCapture&) = delete;
  GraphCapture& operator=(const GraphCapture&) = delete;
  void begin(cudaGraph_t into) {
    fresh = into == nullptr;
    if (fresh)
      ADI_CUDA_CHECK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal));
    else
      ADI_CUDA_CHECK(cudaStreamBeginCaptureToGraph(cs, into, nullptr, nullptr, 0, cudaStreamCaptureModeThreadLocal));
    capturing = true;
  }
  // g: the captured graph (a fresh capture's), or the graph captured into (begin(into)), which
  // is left as it was where the capture failed (cudaStreamEndCapture then returns a null graph:
  // written over, `graph` would leak).
  void end(cudaGraph_t* g) {
    capturing = false;
    cudaGraph_t out = nullptr;
    const cudaError_t e = cudaStreamEndCapture(cs, &out);
    if (fresh || out != nullptr) *g = out;
    ADI_CUDA_CHECK(e);
  }
  cudaGraphExec_t finish() {
    cudaGraphExec_t exec = nullptr;
    ADI_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    failed = false;
    return exec;
  }
  ~GraphCapture() {
    if (capturing) {
      cudaGraph_t g = nullptr;
      (void)cudaStreamEndCapture(cs, &g);
      if (fresh && g != nullptr) (void)cudaGraphDestroy(g);  // else g is graph or a body it owns
    }
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    if (cs != nullptr) (void)cudaStreamDestroy(cs);
    if (failed) (void)cudaGetLastError();
  }
};

template <class Work>
cudaGraphExec_t build_captured_graph(Work&& work) {
  GraphCapture c;
  c.begin(nullptr);
  work(c.cs);
  c.end(&c.graph);
  return c.finish();
}

#if ADI_CUDA_CONDITIONAL_GRAPHS
template <class Prefix, class Body>
cudaGraphExec_t build_if_graph(Prefix&& prefix, Body&& body) {
  GraphCapture c;
  ADI_CUDA_CHECK(cudaGraphCreate(&c.graph, 0));
  cudaGraphConditionalHandle handle{};
  ADI_CUDA_CHECK(cudaGraphConditionalHandleCreate(&handle, c.graph, 0, cudaGraphCondAssignDefault));
  c.begin(c.graph);
  prefix(c.cs, handle);
  cudaStreamCaptureStatus status{};
  const cudaGraphNode_t* deps = nullptr;
  std::size_t ndeps = 0;
#if CUDART_VERSION >= 13000  // edge data in the capture API since CUDA 13 (12.x: the _v3 / _v2 names)
  ADI_CUDA_CHECK(cudaStreamGetCaptureInfo(c.cs, &status, nullptr, nullptr, &deps, nullptr, &ndeps));
#else
  ADI_CUDA_CHECK(cudaStreamGetCaptureInfo(c.cs, &status, nullptr, nullptr, &deps, &ndeps));
#endif
  // deps is valid only while the capture is active (prefix may have ended or broken it).
  ADI_CUDA_CHECK(status == cudaStreamCaptureStatusActive ? cudaSuccess : cudaErrorStreamCaptureInvalidated);
  cudaGraphNodeParams cp{};
  cp.type = cudaGraphNodeTypeConditional;
  cp.conditional.handle = handle;
  cp.conditional.type = cudaGraphCondTypeIf;
  cp.conditional.size = 1;
  cudaGraphNode_t node = nullptr;
#if CUDART_VERSION >= 13000
  ADI_CUDA_CHECK(cudaGraphAddNode(&node, c.graph, deps, nullptr, ndeps, &cp));
  ADI_CUDA_CHECK(cudaStreamUpdateCaptureDependencies(c.cs, &node, nullptr, 1, cudaStreamSetCaptureDependencies));
#else
  ADI_CUDA_CHECK(cudaGraphAddNode(&node, c.graph, deps, ndeps, &cp));
  ADI_CUDA_CHECK(cudaStreamUpdateCaptureDependencies(c.cs, &node, 1, cudaStreamSetCaptureDependencies));
#endif
  c.end(&c.graph);
  cudaGraph_t if_body = cp.conditional.phGraph_out[0];  // owned by c.graph
  c.begin(if_body);
  body(c.cs);
  c.end(&if_body);
  return c.finish();
}
#endif

}  // namespace adi::cuda_backend
