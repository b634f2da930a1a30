#pragma once
// Internal: how many detail::Storage blocks (host and device workspace, plan buffers, Field
// and Array storage) were allocated so far in this process. A diagnostic count, nothing
// depends on it: the tests check with it that a plan's first solve() allocates nothing
// (tests/adi/test_plan_conventions.cpp). Defined in adi/field.cpp.
#include <cstddef>

namespace adi::detail {
std::size_t storage_allocation_count();
}  // namespace adi::detail
