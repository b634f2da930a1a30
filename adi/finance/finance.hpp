#pragma once
// Option pricing with ADI (issue 5; docs/finance.md): models and contracts, closed forms,
// the ADI pricer for 1-3 Black-Scholes assets and Heston, one-asset American exercise;
// the one-asset engine (barriers, dividends, term structures, local volatility, Bermudan,
// greeks) and option chains as one batch (issue 20).
#include "adi/finance/american.hpp"
#include "adi/finance/chain.hpp"
#include "adi/finance/closed_form.hpp"
#include "adi/finance/extrapolation.hpp"
#include "adi/finance/model.hpp"
#include "adi/finance/one_asset.hpp"
#include "adi/finance/pricer.hpp"
