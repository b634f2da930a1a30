#pragma once
// Shared by the finance tests: runs f, expects adi::InvalidArgument whose message contains
// every fragment (the argument's name, its value, the accepted range).
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "adi/error.hpp"

template <class F>
void expect_invalid(F f, std::initializer_list<const char*> fragments) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning " << *fragments.begin();
  } catch (const adi::InvalidArgument& e) {
    for (const char* frag : fragments)
      EXPECT_NE(std::string(e.what()).find(frag), std::string::npos) << "message: " << e.what();
  }
}
