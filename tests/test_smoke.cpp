#include <gtest/gtest.h>
#include "adi/tridiagonal.hpp"
TEST(Smoke, Builds) { EXPECT_STREQ(adi::kernel_name(adi::Kernel::reference), "reference"); }
