#pragma once
// Public name of the vocabulary header adi/base/layout.hpp (adi/base/ is what adi/ and solvers/ share).
#include "adi/base/layout.hpp"
