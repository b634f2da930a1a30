// The C API (adi/adi_c.h) over the C++ library. Every entry point runs its body inside
// guarded(), which turns each adi error class into its status code and records the message
// (and a singular system's system/row) in thread-local state: no exception leaves this file.
// Handles hold one plan of either precision (std::variant); a call of the other precision
// is refused with ADI_ERROR_WRONG_PRECISION.
#include "adi/adi_c.h"

#include <cstring>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "adi/adi.hpp"

#ifndef ADI_VERSION_STRING
#define ADI_VERSION_STRING "unknown"
#endif

namespace {

using adi::Executor;
using adi::index_t;

// ----- errors -------------------------------------------------------------------------

struct ErrorState {
  adi_status status = ADI_SUCCESS;
  std::string message;
  int64_t system = -1, row = -1;
};
thread_local ErrorState t_error;

// Thrown inside this file only, for the codes the C++ library has no class for.
struct CError {
  adi_status status;
  std::string message;
};

adi_status fail(adi_status s, std::string message, int64_t system = -1, int64_t row = -1) {
  t_error.status = s;
  t_error.message = std::move(message);
  t_error.system = system;
  t_error.row = row;
  return s;
}

// Runs f (returning void) and maps whatever it throws to a status.
template <class F>
adi_status guarded(F&& f) noexcept {
  t_error = ErrorState{};
  try {
    f();
    return ADI_SUCCESS;
  } catch (const CError& e) {
    return fail(e.status, e.message);
  } catch (const adi::SingularSystem& e) {
    return fail(ADI_ERROR_SINGULAR_SYSTEM, e.what(), e.system(), e.row());
  } catch (const adi::InvalidArgument& e) {
    return fail(ADI_ERROR_INVALID_ARGUMENT, e.what());
  } catch (const adi::Unsupported& e) {
    return fail(ADI_ERROR_UNSUPPORTED, e.what());
  } catch (const adi::DeviceError& e) {
    return fail(ADI_ERROR_DEVICE, e.what());
  } catch (const adi::Error& e) {
    return fail(ADI_ERROR_INTERNAL, e.what());
  } catch (const std::bad_alloc& e) {
    return fail(ADI_ERROR_OUT_OF_MEMORY, std::string("out of memory: ") + e.what());
  } catch (const std::exception& e) {
    return fail(ADI_ERROR_INTERNAL, e.what());
  } catch (...) {
    return fail(ADI_ERROR_INTERNAL, "unknown C++ exception");
  }
}

void require_ptr(const void* p, const char* who, const char* name) {
  if (p == nullptr) throw CError{ADI_ERROR_NULL_POINTER, std::string(who) + ": " + name + " is NULL"};
}

bool precision_ok(int32_t p) { return p == ADI_FLOAT32 || p == ADI_FLOAT64; }
void require_precision(int32_t p, const char* who) {
  if (!precision_ok(p))
    throw adi::InvalidArgument(std::string(who) + ": precision = " + std::to_string(p) +
                               " is not ADI_FLOAT32 (0) or ADI_FLOAT64 (1)");
}

adi::Axis to_axis(int32_t axis, const char* who) {
  if (axis < 0 || axis > 2)
    throw adi::InvalidArgument(std::string(who) + ": axis = " + std::to_string(axis) +
                               " is not ADI_AXIS_X (0), ADI_AXIS_Y (1) or ADI_AXIS_Z (2)");
  return static_cast<adi::Axis>(axis);
}

adi::BlockOrder to_order(int32_t order, const char* who) {
  if (order != ADI_ROW_MAJOR && order != ADI_COLUMN_MAJOR)
    throw adi::InvalidArgument(std::string(who) + ": order = " + std::to_string(order) +
                               " is not ADI_ROW_MAJOR (0) or ADI_COLUMN_MAJOR (1)");
  return static_cast<adi::BlockOrder>(order);
}

// ----- handles ------------------------------------------------------------------------

// A plan of either precision. Get<T>() refuses the other one.
template <template <class> class Plan>
struct Dual {
  std::variant<std::monostate, Plan<float>, Plan<double>> plan;
  template <class T>
  Plan<T>& get(const char* who) {
    if (auto* p = std::get_if<Plan<T>>(&plan)) return *p;
    throw CError{ADI_ERROR_WRONG_PRECISION,
                 std::string(who) + ": the plan was created for " +
                     (std::holds_alternative<Plan<float>>(plan) ? "ADI_FLOAT32" : "ADI_FLOAT64") +
                     "; call the " + (std::holds_alternative<Plan<float>>(plan) ? "_f32" : "_f64") +
                     " function or create the plan with the other precision"};
  }
  template <class T>
  const Plan<T>* find() const {
    return std::get_if<Plan<T>>(&plan);
  }
};

// Builds Plan<float> or Plan<double> from the same arguments.
template <template <class> class Plan, class... Args>
void emplace(Dual<Plan>& d, int32_t precision, Args&&... args) {
  if (precision == ADI_FLOAT32)
    d.plan.template emplace<Plan<float>>(std::forward<Args>(args)...);
  else
    d.plan.template emplace<Plan<double>>(std::forward<Args>(args)...);
}

// Calls f(plan) on whichever precision the handle holds.
template <template <class> class Plan, class F>
auto visit_plan(const Dual<Plan>& d, F&& f) {
  if (const auto* p = d.template find<float>()) return f(*p);
  return f(*d.template find<double>());
}

}  // namespace

struct adi_executor {
  Executor exec = Executor::host();
};
struct adi_buffer {
  Executor exec = Executor::host();
  adi::detail::Storage storage;
};
struct adi_tridiagonal_plan : Dual<adi::TridiagonalPlan> {};
struct adi_block_plan : Dual<adi::BlockTridiagonalPlan> {};
struct adi_large_plan : Dual<adi::LargeTridiagonalPlan> {};
struct adi_hines_plan : Dual<adi::HinesPlan> {};
struct adi_variable_plan : Dual<adi::VariableTridiagonalPlan> {
  std::optional<adi::VariableBatchPlan> batch;
};
struct adi_cholesky_plan : Dual<adi::BatchedCholeskyPlan> {
  std::optional<adi::VariableBatchPlan> batch;
};
struct adi_heat_solver {
  adi::Grid grid;
  std::variant<std::monostate, adi::AdiSolver<float>, adi::AdiSolver<double>> solver;
  std::variant<std::monostate, adi::Field<float>, adi::Field<double>> u;
  Executor exec = Executor::host();
};

namespace {
// Creates a handle, runs init on it, hands it out only when init succeeded.
template <class H, class F>
adi_status create(H** out, const char* who, F&& init) {
  return guarded([&] {
    require_ptr(out, who, "out");
    *out = nullptr;
    auto h = std::make_unique<H>();
    init(*h);
    *out = h.release();
  });
}

template <class H>
adi_status destroy(H* h) {
  return guarded([&] { delete h; });
}

const Executor& executor_of(const adi_executor* e, const char* who) {
  require_ptr(e, who, "executor");
  return e->exec;
}

adi::Kernel tridiagonal_kernel(const char* name) {
  return name == nullptr ? adi::Kernel::automatic : adi::kernel_from_name(name);
}
adi::BlockKernel block_kernel(const char* name) {
  return name == nullptr ? adi::BlockKernel::automatic : adi::block_kernel_from_name(name);
}

adi_lines from_lines(const adi::LineSet& l) { return {l.n, l.stride, l.count0, l.stride0, l.count1, l.stride1}; }

adi_block_lines from_block_lines(const adi::BlockLineSet& l) {
  auto s = [](const adi::BlockStrides& x) { return adi_block_strides{x.row, x.system0, x.system1, x.component}; };
  return {l.m, static_cast<int32_t>(l.order), l.n, l.count0, l.count1, s(l.vectors), s(l.blocks)};
}
adi::BlockLineSet to_block_lines(const adi_block_lines& l) {
  auto s = [](const adi_block_strides& x) { return adi::BlockStrides{x.row, x.system0, x.system1, x.component}; };
  return adi::to_block_lines(
      adi::BlockLineSet{l.m, l.n, l.count0, l.count1, s(l.vectors), s(l.blocks), to_order(l.order, "adi_block_lines")});
}
}  // namespace

// The entry points: C linkage from their declarations in adi/adi_c.h.

// ----- status and errors ----------------------------------------------------------------

const char* adi_status_string(int32_t status) {
  switch (status) {
    case ADI_SUCCESS: return "ADI_SUCCESS";
    case ADI_ERROR_INVALID_ARGUMENT: return "ADI_ERROR_INVALID_ARGUMENT";
    case ADI_ERROR_NULL_POINTER: return "ADI_ERROR_NULL_POINTER";
    case ADI_ERROR_SINGULAR_SYSTEM: return "ADI_ERROR_SINGULAR_SYSTEM";
    case ADI_ERROR_UNSUPPORTED: return "ADI_ERROR_UNSUPPORTED";
    case ADI_ERROR_DEVICE: return "ADI_ERROR_DEVICE";
    case ADI_ERROR_OUT_OF_MEMORY: return "ADI_ERROR_OUT_OF_MEMORY";
    case ADI_ERROR_WRONG_PRECISION: return "ADI_ERROR_WRONG_PRECISION";
    case ADI_ERROR_INTERNAL: return "ADI_ERROR_INTERNAL";
    default: return "unknown adi_status";
  }
}
const char* adi_last_error_message(void) { return t_error.message.c_str(); }
int64_t adi_last_error_message_copy(char* buffer, int64_t size) {
  const auto len = static_cast<int64_t>(t_error.message.size());
  if (buffer != nullptr && size > 0) {
    const int64_t k = len < size - 1 ? len : size - 1;
    std::memcpy(buffer, t_error.message.data(), static_cast<std::size_t>(k));
    buffer[k] = '\0';
  }
  return len;
}
int32_t adi_last_error_status(void) { return t_error.status; }
int64_t adi_last_error_system(void) { return t_error.system; }
int64_t adi_last_error_row(void) { return t_error.row; }
const char* adi_version(void) { return ADI_VERSION_STRING; }

// ----- executors ------------------------------------------------------------------------

adi_status adi_executor_create_host(int32_t threads, adi_executor** out) {
  return create(out, "adi_executor_create_host", [&](adi_executor& e) { e.exec = Executor::host(threads); });
}
adi_status adi_executor_create_cuda(int32_t device, void* stream, adi_executor** out) {
  return create(out, "adi_executor_create_cuda", [&](adi_executor& e) { e.exec = Executor::cuda(device, stream); });
}
adi_status adi_executor_destroy(adi_executor* executor) { return destroy(executor); }
int32_t adi_cuda_available(void) {
  try {  // not guarded(): a query, it leaves the error state as it is
    return Executor::cuda_available() ? 1 : 0;
  } catch (...) {
    return 0;
  }
}
int32_t adi_executor_is_cuda(const adi_executor* executor) {
  return executor != nullptr && executor->exec.is_cuda() ? 1 : 0;
}
adi_status adi_executor_synchronize(const adi_executor* executor) {
  return guarded([&] { executor_of(executor, "adi_executor_synchronize").synchronize(); });
}

// ----- buffers --------------------------------------------------------------------------

adi_status adi_buffer_create(const adi_executor* executor, int64_t bytes, adi_buffer** out) {
  constexpr const char* who = "adi_buffer_create";
  return create(out, who, [&](adi_buffer& b) {
    b.exec = executor_of(executor, who);
    adi::detail::require(bytes >= 0 && bytes <= (int64_t(1) << 56),
                         std::string(who) + ": bytes = " + std::to_string(bytes) + " must be in 0 .. 2^56");
    try {
      b.storage = adi::detail::Storage(static_cast<std::size_t>(bytes), b.exec);
    } catch (const adi::InvalidArgument&) {
      throw;
    } catch (const std::exception& e) {  // host: adi::Error "out of host memory"; device: a failed cudaMalloc
      throw CError{ADI_ERROR_OUT_OF_MEMORY, std::string(who) + ": " + e.what()};
    }
  });
}
adi_status adi_buffer_destroy(adi_buffer* buffer) { return destroy(buffer); }
void* adi_buffer_data(const adi_buffer* buffer) { return buffer ? buffer->storage.get() : nullptr; }
int64_t adi_buffer_bytes(const adi_buffer* buffer) {
  return buffer ? static_cast<int64_t>(buffer->storage.bytes()) : 0;
}

namespace {
adi_status buffer_copy(const adi_buffer* buffer, void* dst, const void* src, int64_t bytes, const char* who) {
  const bool to_host = src == nullptr;  // exactly one of dst, src is the host array
  return guarded([&] {
    require_ptr(buffer, who, "buffer");
    require_ptr(to_host ? dst : src, who, to_host ? "dst" : "src");
    adi::detail::require(bytes >= 0 && bytes <= adi_buffer_bytes(buffer),
                         std::string(who) + ": bytes = " + std::to_string(bytes) + " must be in 0 .. " +
                             std::to_string(adi_buffer_bytes(buffer)) + " (the buffer's size)");
    if (bytes == 0) return;
    const adi::MemorySpace space = buffer->exec.memory_space();
    if (to_host)
      adi::detail::copy_bytes(dst, adi::MemorySpace::host, buffer->storage.get(), space,
                              static_cast<std::size_t>(bytes), buffer->exec.stream());
    else
      adi::detail::copy_bytes(buffer->storage.get(), space, src, adi::MemorySpace::host,
                              static_cast<std::size_t>(bytes), buffer->exec.stream());
  });
}
}  // namespace

adi_status adi_buffer_copy_from_host(adi_buffer* buffer, const void* src, int64_t bytes) {
  return src ? buffer_copy(buffer, nullptr, src, bytes, "adi_buffer_copy_from_host")
             : guarded([] { throw CError{ADI_ERROR_NULL_POINTER, "adi_buffer_copy_from_host: src is NULL"}; });
}
adi_status adi_buffer_copy_to_host(const adi_buffer* buffer, void* dst, int64_t bytes) {
  return buffer_copy(buffer, dst, nullptr, bytes, "adi_buffer_copy_to_host");
}

// ----- tridiagonal ----------------------------------------------------------------------

adi_status adi_lines_strided(int64_t n, int64_t count, int64_t element_stride, int64_t line_stride,
                             adi_lines* out) {
  return guarded([&] {
    require_ptr(out, "adi_lines_strided", "out");
    *out = from_lines(adi::to_lines(adi::StridedLines{n, count, element_stride, line_stride}));
  });
}
adi_status adi_lines_box(int64_t nx, int64_t ny, int64_t nz, int64_t sy, int64_t sz, int32_t axis,
                         adi_lines* out) {
  return guarded([&] {
    require_ptr(out, "adi_lines_box", "out");
    if (sy == 0) sy = nx;
    if (sz == 0) sz = sy * ny;
    *out = from_lines(adi::to_lines(adi::BoxLines{{nx, ny, nz, sy, sz}, to_axis(axis, "adi_lines_box")}));
  });
}
adi_status adi_lines_interleaved(int64_t n, int64_t batch, adi_lines* out) {
  return guarded([&] {
    require_ptr(out, "adi_lines_interleaved", "out");
    *out = from_lines(adi::to_lines(adi::InterleavedBatch{n, batch}));
  });
}

void adi_tridiagonal_options_init(adi_tridiagonal_options* o) {
  if (o) *o = adi_tridiagonal_options{0, 1, nullptr};
}

adi_status adi_tridiagonal_plan_create(const adi_executor* executor, int32_t precision, const adi_lines* lines,
                                       const adi_tridiagonal_options* options, adi_tridiagonal_plan** out) {
  constexpr const char* who = "adi_tridiagonal_plan_create";
  return create(out, who, [&](adi_tridiagonal_plan& h) {
    const Executor& exec = executor_of(executor, who);
    require_ptr(lines, who, "lines");
    require_precision(precision, who);
    adi_tridiagonal_options o;
    adi_tridiagonal_options_init(&o);
    if (options) o = *options;
    const adi::TridiagonalOptions opt{o.periodic != 0, tridiagonal_kernel(o.kernel), o.check_pivots != 0};
    const adi::LineSet l{lines->n, lines->stride, lines->count0, lines->stride0, lines->count1, lines->stride1};
    emplace(h, precision, exec, adi::to_lines(l), opt);
  });
}
adi_status adi_tridiagonal_plan_destroy(adi_tridiagonal_plan* plan) { return destroy(plan); }
const char* adi_tridiagonal_plan_kernel(const adi_tridiagonal_plan* plan) {
  if (!plan) return nullptr;
  return visit_plan(*plan, [](const auto& p) { return adi::kernel_name(p.kernel()); });
}

namespace {
template <class T>
adi_status tridiagonal_solve(adi_tridiagonal_plan* plan, const T* a, const T* b, const T* c, const T* d, T* u,
                             bool shared, const char* who) {
  return guarded([&] {
    require_ptr(plan, who, "plan");
    auto& p = plan->get<T>(who);
    if (shared)
      p.solve(adi::SharedBands<T>{a, b, c}, d, u);
    else
      p.solve(adi::Bands<T>{a, b, c}, d, u);
  });
}
}  // namespace

adi_status adi_tridiagonal_solve_f32(adi_tridiagonal_plan* plan, const float* a, const float* b, const float* c,
                                     const float* d, float* u) {
  return tridiagonal_solve(plan, a, b, c, d, u, false, "adi_tridiagonal_solve_f32");
}
adi_status adi_tridiagonal_solve_f64(adi_tridiagonal_plan* plan, const double* a, const double* b,
                                     const double* c, const double* d, double* u) {
  return tridiagonal_solve(plan, a, b, c, d, u, false, "adi_tridiagonal_solve_f64");
}
adi_status adi_tridiagonal_solve_shared_f32(adi_tridiagonal_plan* plan, const float* a, const float* b,
                                            const float* c, const float* d, float* u) {
  return tridiagonal_solve(plan, a, b, c, d, u, true, "adi_tridiagonal_solve_shared_f32");
}
adi_status adi_tridiagonal_solve_shared_f64(adi_tridiagonal_plan* plan, const double* a, const double* b,
                                            const double* c, const double* d, double* u) {
  return tridiagonal_solve(plan, a, b, c, d, u, true, "adi_tridiagonal_solve_shared_f64");
}

// ----- block ----------------------------------------------------------------------------

adi_status adi_block_lines_contiguous(int32_t m, int64_t n, int64_t systems, int32_t order, adi_block_lines* out) {
  return guarded([&] {
    require_ptr(out, "adi_block_lines_contiguous", "out");
    *out = from_block_lines(
        adi::to_block_lines(adi::BlockContiguous{m, n, systems, to_order(order, "adi_block_lines_contiguous")}));
  });
}
adi_status adi_block_lines_interleaved(int32_t m, int64_t n, int64_t systems, int32_t order,
                                       adi_block_lines* out) {
  return guarded([&] {
    require_ptr(out, "adi_block_lines_interleaved", "out");
    *out = from_block_lines(
        adi::to_block_lines(adi::BlockInterleaved{m, n, systems, to_order(order, "adi_block_lines_interleaved")}));
  });
}
adi_status adi_block_lines_grid(int32_t m, int64_t nx, int64_t ny, int64_t nz, int32_t axis,
                                const int64_t vector_strides[4], const int64_t block_strides[4], int32_t order,
                                adi_block_lines* out) {
  constexpr const char* who = "adi_block_lines_grid";
  return guarded([&] {
    require_ptr(out, who, "out");
    require_ptr(vector_strides, who, "vector_strides");
    require_ptr(block_strides, who, "block_strides");
    auto pa = [](const int64_t* s) { return adi::PointArray{s[0], s[1], s[2], s[3]}; };
    *out = from_block_lines(adi::to_block_lines(adi::BlockGridLines{
        m, nx, ny, nz, to_axis(axis, who), pa(vector_strides), pa(block_strides), to_order(order, who)}));
  });
}

void adi_block_options_init(adi_block_options* o) {
  if (o) *o = adi_block_options{0, 1, 0.0, nullptr};
}

adi_status adi_block_plan_create(const adi_executor* executor, int32_t precision, const adi_block_lines* lines,
                                 const adi_block_options* options, adi_block_plan** out) {
  constexpr const char* who = "adi_block_plan_create";
  return create(out, who, [&](adi_block_plan& h) {
    const Executor& exec = executor_of(executor, who);
    require_ptr(lines, who, "lines");
    require_precision(precision, who);
    adi_block_options o;
    adi_block_options_init(&o);
    if (options) o = *options;
    adi::BlockTridiagonalOptions opt;
    opt.kernel = block_kernel(o.kernel);
    opt.pivot_tolerance = o.pivot_tolerance;
    opt.periodic = o.periodic != 0;
    opt.check_pivots = o.check_pivots != 0;
    emplace(h, precision, exec, to_block_lines(*lines), opt);
  });
}
adi_status adi_block_plan_destroy(adi_block_plan* plan) { return destroy(plan); }
const char* adi_block_plan_kernel(const adi_block_plan* plan) {
  if (!plan) return nullptr;
  return visit_plan(*plan, [](const auto& p) { return adi::block_kernel_name(p.kernel()); });
}
adi_status adi_block_plan_spans(const adi_block_plan* plan, int64_t* block_span, int64_t* vector_span) {
  return guarded([&] {
    require_ptr(plan, "adi_block_plan_spans", "plan");
    const adi::BlockLineSet& l = visit_plan(*plan, [](const auto& p) -> const adi::BlockLineSet& { return p.lines(); });
    if (block_span) *block_span = adi::block_span(l);
    if (vector_span) *vector_span = adi::vector_span(l);
  });
}

namespace {
template <class T>
adi_status block_solve(adi_block_plan* plan, const T* a, const T* b, const T* c, const T* d, T* u, const char* who) {
  return guarded([&] {
    require_ptr(plan, who, "plan");
    plan->get<T>(who).solve(adi::BlockBands<T>{a, b, c}, d, u);
  });
}
}  // namespace

adi_status adi_block_solve_f32(adi_block_plan* plan, const float* a, const float* b, const float* c,
                               const float* d, float* u) {
  return block_solve(plan, a, b, c, d, u, "adi_block_solve_f32");
}
adi_status adi_block_solve_f64(adi_block_plan* plan, const double* a, const double* b, const double* c,
                               const double* d, double* u) {
  return block_solve(plan, a, b, c, d, u, "adi_block_solve_f64");
}

// ----- variable-size --------------------------------------------------------------------

adi_status adi_variable_plan_create(const adi_executor* executor, int32_t precision, const int32_t* sizes,
                                    int64_t count, const adi_variable_layout* layout, int32_t periodic,
                                    adi_variable_plan** out) {
  constexpr const char* who = "adi_variable_plan_create";
  return create(out, who, [&](adi_variable_plan& h) {
    const Executor& exec = executor_of(executor, who);
    if (count > 0) require_ptr(sizes, who, "sizes");
    require_ptr(layout, who, "layout");
    require_precision(precision, who);
    h.batch.emplace(exec, adi::BatchSizes{sizes, count});
    adi::VariableTridiagonalOptions opt;
    opt.periodic = periodic != 0;
    if (layout->kind == ADI_VARIABLE_COMPACT)
      emplace(h, precision, *h.batch, adi::CompactBatch{layout->offsets}, opt);
    else if (layout->kind == ADI_VARIABLE_PADDED)
      emplace(h, precision, *h.batch, adi::PaddedInterleaved{layout->stride, layout->rows}, opt);
    else
      throw adi::InvalidArgument(std::string(who) + ": layout kind = " + std::to_string(layout->kind) +
                                 " is not ADI_VARIABLE_COMPACT (0) or ADI_VARIABLE_PADDED (1)");
  });
}
adi_status adi_variable_plan_destroy(adi_variable_plan* plan) { return destroy(plan); }
adi_status adi_variable_plan_span(const adi_variable_plan* plan, int64_t* span) {
  return guarded([&] {
    require_ptr(plan, "adi_variable_plan_span", "plan");
    require_ptr(span, "adi_variable_plan_span", "span");
    *span = visit_plan(*plan, [](const auto& p) { return p.span(); });
  });
}

namespace {
template <class T>
adi_status variable_solve(adi_variable_plan* plan, const T* a, const T* b, const T* c, const T* d, T* u,
                          const char* who) {
  return guarded([&] {
    require_ptr(plan, who, "plan");
    auto& p = plan->get<T>(who);
    if (p.span() > 0)
      for (const void* q : {static_cast<const void*>(a), static_cast<const void*>(b), static_cast<const void*>(c),
                            static_cast<const void*>(d), static_cast<const void*>(u)})
        require_ptr(q, who, "an array (a, b, c, d or u)");
    p.solve(adi::Bands<T>{a, b, c}, d, u);
  });
}
}  // namespace

adi_status adi_variable_solve_f32(adi_variable_plan* plan, const float* a, const float* b, const float* c,
                                  const float* d, float* u) {
  return variable_solve(plan, a, b, c, d, u, "adi_variable_solve_f32");
}
adi_status adi_variable_solve_f64(adi_variable_plan* plan, const double* a, const double* b, const double* c,
                                  const double* d, double* u) {
  return variable_solve(plan, a, b, c, d, u, "adi_variable_solve_f64");
}

// ----- Cholesky -------------------------------------------------------------------------

adi_status adi_cholesky_plan_create(const adi_executor* executor, int32_t precision, const int32_t* sizes,
                                    int64_t count, const int64_t* offsets, int32_t check_pivots,
                                    adi_cholesky_plan** out) {
  constexpr const char* who = "adi_cholesky_plan_create";
  return create(out, who, [&](adi_cholesky_plan& h) {
    const Executor& exec = executor_of(executor, who);
    if (count > 0) require_ptr(sizes, who, "sizes");
    require_precision(precision, who);
    h.batch.emplace(exec, adi::BatchSizes{sizes, count});
    adi::CholeskyOptions opt;
    opt.check_pivots = check_pivots != 0;
    emplace(h, precision, *h.batch, adi::CompactBatch{offsets}, opt);
  });
}
adi_status adi_cholesky_plan_destroy(adi_cholesky_plan* plan) { return destroy(plan); }

namespace {
template <class T>
adi_status cholesky_factor(adi_cholesky_plan* plan, T* a, int32_t* info, const char* who) {
  return guarded([&] {
    require_ptr(plan, who, "plan");
    auto& p = plan->get<T>(who);
    if (plan->batch->total_size() > 0) require_ptr(a, who, "a");
    p.factor(a, info);
  });
}
template <class T>
adi_status cholesky_solve(adi_cholesky_plan* plan, const T* l, T* b, int32_t nrhs, const int32_t* info,
                          const char* who) {
  return guarded([&] {
    require_ptr(plan, who, "plan");
    auto& p = plan->get<T>(who);
    if (plan->batch->total_size() > 0) {
      require_ptr(l, who, "l");
      require_ptr(b, who, "b");
    }
    p.solve(l, b, nrhs, info);
  });
}
}  // namespace

adi_status adi_cholesky_factor_f32(adi_cholesky_plan* plan, float* a, int32_t* info) {
  return cholesky_factor(plan, a, info, "adi_cholesky_factor_f32");
}
adi_status adi_cholesky_factor_f64(adi_cholesky_plan* plan, double* a, int32_t* info) {
  return cholesky_factor(plan, a, info, "adi_cholesky_factor_f64");
}
adi_status adi_cholesky_solve_f32(adi_cholesky_plan* plan, const float* l, float* b, int32_t nrhs,
                                  const int32_t* info) {
  return cholesky_solve(plan, l, b, nrhs, info, "adi_cholesky_solve_f32");
}
adi_status adi_cholesky_solve_f64(adi_cholesky_plan* plan, const double* l, double* b, int32_t nrhs,
                                  const int32_t* info) {
  return cholesky_solve(plan, l, b, nrhs, info, "adi_cholesky_solve_f64");
}

// ----- large systems --------------------------------------------------------------------

adi_status adi_large_plan_create(const adi_executor* executor, int32_t precision, int64_t n, int64_t count,
                                 int64_t system_stride, int32_t periodic, adi_large_plan** out) {
  constexpr const char* who = "adi_large_plan_create";
  return create(out, who, [&](adi_large_plan& h) {
    const Executor& exec = executor_of(executor, who);
    require_precision(precision, who);
    adi::LargeTridiagonalOptions opt;
    opt.periodic = periodic != 0;
    emplace(h, precision, exec, n, count, system_stride, opt);
  });
}
adi_status adi_large_plan_destroy(adi_large_plan* plan) { return destroy(plan); }
const char* adi_large_plan_kernel(const adi_large_plan* plan) {
  if (!plan) return nullptr;
  return visit_plan(*plan, [](const auto& p) { return adi::large_kernel_name(p.kernel()); });
}
const char* adi_large_plan_variant(const adi_large_plan* plan) { return adi_large_plan_kernel(plan); }

namespace {
template <class T>
adi_status large_solve(adi_large_plan* plan, const T* a, const T* b, const T* c, const T* d, T* u, const char* who) {
  return guarded([&] {
    require_ptr(plan, who, "plan");
    plan->get<T>(who).solve(adi::Bands<T>{a, b, c}, d, u);
  });
}
}  // namespace

adi_status adi_large_solve_f32(adi_large_plan* plan, const float* a, const float* b, const float* c,
                               const float* d, float* u) {
  return large_solve(plan, a, b, c, d, u, "adi_large_solve_f32");
}
adi_status adi_large_solve_f64(adi_large_plan* plan, const double* a, const double* b, const double* c,
                               const double* d, double* u) {
  return large_solve(plan, a, b, c, d, u, "adi_large_solve_f64");
}

// ----- Hines ----------------------------------------------------------------------------

adi_status adi_hines_plan_create(const adi_executor* executor, int32_t precision, int32_t trees,
                                 const int32_t* tree_sizes, const int32_t* parents, int64_t count,
                                 const int32_t* tree_of, adi_hines_plan** out) {
  constexpr const char* who = "adi_hines_plan_create";
  return create(out, who, [&](adi_hines_plan& h) {
    const Executor& exec = executor_of(executor, who);
    require_precision(precision, who);
    adi::detail::require(trees >= 1, std::string(who) + ": trees = " + std::to_string(trees) + " must be >= 1");
    adi::detail::require(count >= 0, std::string(who) + ": count = " + std::to_string(count) + " must be >= 0");
    require_ptr(tree_sizes, who, "tree_sizes");
    require_ptr(parents, who, "parents");
    adi::HinesBatch batch;
    const int32_t* p = parents;
    for (int32_t t = 0; t < trees; ++t) {
      adi::detail::require(tree_sizes[t] >= 1, std::string(who) + ": tree_sizes[" + std::to_string(t) +
                                                   "] = " + std::to_string(tree_sizes[t]) + " must be >= 1");
      batch.topologies.emplace_back(std::vector<int>(p, p + tree_sizes[t]));
      p += tree_sizes[t];
    }
    batch.topology_of.assign(static_cast<std::size_t>(count), 0);
    if (tree_of)
      for (int64_t s = 0; s < count; ++s) {
        adi::detail::require(tree_of[s] >= 0 && tree_of[s] < trees,
                             std::string(who) + ": tree_of[" + std::to_string(s) + "] = " +
                                 std::to_string(tree_of[s]) + " must be in 0.." + std::to_string(trees - 1));
        batch.topology_of[static_cast<std::size_t>(s)] = tree_of[s];
      }
    emplace(h, precision, exec, batch, adi::CompactBatch{});
  });
}
adi_status adi_hines_plan_destroy(adi_hines_plan* plan) { return destroy(plan); }
adi_status adi_hines_plan_span(const adi_hines_plan* plan, int64_t* span) {
  return guarded([&] {
    require_ptr(plan, "adi_hines_plan_span", "plan");
    require_ptr(span, "adi_hines_plan_span", "span");
    *span = visit_plan(*plan, [](const auto& p) { return p.span(); });
  });
}

namespace {
template <class T>
adi_status hines_solve(adi_hines_plan* plan, const T* offdiag, T* diag, T* rhs, const char* who) {
  return guarded([&] {
    require_ptr(plan, who, "plan");
    auto& p = plan->get<T>(who);
    if (p.span() > 0) {
      require_ptr(offdiag, who, "offdiag");
      require_ptr(diag, who, "diag");
      require_ptr(rhs, who, "rhs");
    }
    p.solve(offdiag, diag, rhs);
  });
}
}  // namespace

adi_status adi_hines_solve_f32(adi_hines_plan* plan, const float* offdiag, float* diag, float* rhs) {
  return hines_solve(plan, offdiag, diag, rhs, "adi_hines_solve_f32");
}
adi_status adi_hines_solve_f64(adi_hines_plan* plan, const double* offdiag, double* diag, double* rhs) {
  return hines_solve(plan, offdiag, diag, rhs, "adi_hines_solve_f64");
}

// ----- heat solver ----------------------------------------------------------------------

void adi_heat_problem_init(adi_heat_problem* p) {
  if (!p) return;
  *p = adi_heat_problem{};
  for (int d = 0; d < 3; ++d) p->n[d] = 1, p->lo[d] = 0, p->hi[d] = 1, p->diffusivity[d] = 1;
  p->n[0] = 2;
  p->scheme = ADI_DOUGLAS;
}

namespace {
adi::Scheme make_scheme(const adi_heat_problem& p) {
  const double th = p.theta;
  adi::Scheme s;
  switch (p.scheme) {
    case ADI_DOUGLAS: s = th > 0 ? adi::Scheme::douglas(th) : adi::Scheme::douglas(); break;
    case ADI_CRAIG_SNEYD: s = th > 0 ? adi::Scheme::craig_sneyd(th) : adi::Scheme::craig_sneyd(); break;
    case ADI_MODIFIED_CRAIG_SNEYD:
      s = th > 0 ? adi::Scheme::modified_craig_sneyd(th) : adi::Scheme::modified_craig_sneyd();
      break;
    case ADI_HUNDSDORFER_VERWER:
      s = th > 0 ? adi::Scheme::hundsdorfer_verwer(th) : adi::Scheme::hundsdorfer_verwer();
      break;
    case ADI_PEACEMAN_RACHFORD: s = adi::Scheme::peaceman_rachford(); break;
    default:
      throw adi::InvalidArgument("adi_heat_problem: scheme = " + std::to_string(p.scheme) +
                                 " is not an adi_scheme_kind (ADI_DOUGLAS 0 .. ADI_PEACEMAN_RACHFORD 4)");
  }
  return s.with_damping(p.damping_steps);
}

template <class T>
void make_heat(adi_heat_solver& h, const adi_heat_problem& p) {
  adi::BoundaryConditions bc;
  adi::AxisGrid axes[3];
  for (int d = 0; d < 3; ++d) {
    const auto axis = static_cast<adi::Axis>(d);
    const int32_t klo = p.boundary[2 * d], khi = p.boundary[2 * d + 1];
    for (int32_t k : {klo, khi})
      if (k < ADI_DIRICHLET || k > ADI_PERIODIC)
        throw adi::InvalidArgument("adi_heat_problem: boundary kind " + std::to_string(k) + " of axis " +
                                   adi::axis_name(axis) +
                                   " is not ADI_DIRICHLET (0), ADI_NEUMANN (1) or ADI_PERIODIC (2)");
    if ((klo == ADI_PERIODIC) != (khi == ADI_PERIODIC))
      throw adi::InvalidArgument(std::string("adi_heat_problem: axis ") + adi::axis_name(axis) +
                                 " is periodic on one face only; set ADI_PERIODIC on both faces");
    if (klo == ADI_PERIODIC && p.n[d] > 1) {
      axes[d] = adi::periodic_axis(p.n[d], p.lo[d], p.hi[d] - p.lo[d]);
      bc.set_periodic(axis);
    } else {
      axes[d] = adi::AxisGrid::uniform(p.n[d], p.lo[d], p.hi[d]);
      for (int side = 0; side < 2; ++side) {
        const double v = p.boundary_value[2 * d + side];
        const int32_t k = p.boundary[2 * d + side];
        bc.set(adi::face_of(axis, side == 1),
               k == ADI_NEUMANN ? adi::Boundary::neumann(v) : adi::Boundary::dirichlet(v));
      }
    }
  }
  h.grid = adi::Grid(axes[0], axes[1], axes[2]);
  const adi::Pde pde = adi::Pde::heat(p.diffusivity[0], p.diffusivity[1], p.diffusivity[2]);
  h.solver.template emplace<adi::AdiSolver<T>>(h.grid, pde, bc, make_scheme(p), h.exec);
  h.u.template emplace<adi::Field<T>>(h.grid, h.exec);
}

template <class F>
adi_status heat_visit(adi_heat_solver* h, const char* who, F&& f) {
  return guarded([&] {
    require_ptr(h, who, "solver");
    if (auto* s = std::get_if<adi::AdiSolver<float>>(&h->solver))
      f(*s, std::get<adi::Field<float>>(h->u));
    else
      f(std::get<adi::AdiSolver<double>>(h->solver), std::get<adi::Field<double>>(h->u));
  });
}

template <class T>
adi_status heat_copy(const adi_heat_solver* h, T* out, const T* in, const char* who) {
  return guarded([&] {
    require_ptr(h, who, "solver");
    require_ptr(out ? static_cast<const void*>(out) : static_cast<const void*>(in), who, "u");
    const auto* f = std::get_if<adi::Field<T>>(&h->u);
    if (!f)
      throw CError{ADI_ERROR_WRONG_PRECISION, std::string(who) + ": the solver was created for the other precision"};
    adi::Field<T> host = f->to_host();
    const index_t nx = host.nx(), ny = host.ny(), nz = host.nz();
    for (index_t k = 0; k < nz; ++k)
      for (index_t j = 0; j < ny; ++j)
        for (index_t i = 0; i < nx; ++i) {
          if (out)
            out[i + nx * (j + ny * k)] = host(i, j, k);
          else
            host(i, j, k) = in[i + nx * (j + ny * k)];
        }
    if (in) const_cast<adi::Field<T>&>(*f).copy_from(host);
  });
}
}  // namespace

adi_status adi_heat_solver_create(const adi_executor* executor, int32_t precision, const adi_heat_problem* problem,
                                  adi_heat_solver** out) {
  constexpr const char* who = "adi_heat_solver_create";
  return create(out, who, [&](adi_heat_solver& h) {
    h.exec = executor_of(executor, who);
    require_ptr(problem, who, "problem");
    require_precision(precision, who);
    if (precision == ADI_FLOAT32)
      make_heat<float>(h, *problem);
    else
      make_heat<double>(h, *problem);
  });
}
adi_status adi_heat_solver_destroy(adi_heat_solver* solver) { return destroy(solver); }
adi_status adi_heat_step(adi_heat_solver* solver, double t, double dt) {
  return heat_visit(solver, "adi_heat_step", [&](auto& s, auto& u) { s.step(u, t, dt); });
}
adi_status adi_heat_advance(adi_heat_solver* solver, double t0, double t1, int64_t steps) {
  return heat_visit(solver, "adi_heat_advance", [&](auto& s, auto& u) { s.advance(u, t0, t1, steps); });
}
adi_status adi_heat_data(adi_heat_solver* solver, void** data, int64_t* sy, int64_t* sz) {
  return heat_visit(solver, "adi_heat_data", [&](auto&, auto& u) {
    require_ptr(data, "adi_heat_data", "data");
    *data = u.data();
    if (sy) *sy = u.box().sy;
    if (sz) *sz = u.box().sz;
  });
}
adi_status adi_heat_read_f32(const adi_heat_solver* solver, float* u) {
  return heat_copy<float>(solver, u, nullptr, "adi_heat_read_f32");
}
adi_status adi_heat_read_f64(const adi_heat_solver* solver, double* u) {
  return heat_copy<double>(solver, u, nullptr, "adi_heat_read_f64");
}
adi_status adi_heat_write_f32(adi_heat_solver* solver, const float* u) {
  return heat_copy<float>(solver, nullptr, u, "adi_heat_write_f32");
}
adi_status adi_heat_write_f64(adi_heat_solver* solver, const double* u) {
  return heat_copy<double>(solver, nullptr, u, "adi_heat_write_f64");
}

