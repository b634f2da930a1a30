#pragma once
// Public name of the vocabulary header adi/base/error.hpp (adi/base/ is what adi/ and solvers/ share).
#include "adi/base/error.hpp"
