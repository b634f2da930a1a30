#pragma once
// Public name of the vocabulary header adi/base/executor.hpp (adi/base/ is what adi/ and solvers/ share).
#include "adi/base/executor.hpp"
