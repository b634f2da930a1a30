// Prices an option chain read from a CSV file as one batch (adi::finance::price_chain) and
// writes prices and greeks (delta, gamma, theta per year) as CSV.
//
//   option_chain --input chain.csv --output prices.csv [--nodes 201] [--steps 100]
//                [--backend host|cuda] [--threads N] [--print]
//
// Input rows: type,exercise,spot,strike,maturity,volatility,rate,dividend (call|put,
// european|american; maturity in years; rates continuously compounded); '#' starts a
// comment line. Output rows: the input columns, then price,delta,gamma,theta.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "adi/error.hpp"
#include "adi/executor.hpp"
#include "adi/finance/finance.hpp"

namespace fin = adi::finance;

namespace {

// One CSV row; throws adi::InvalidArgument naming the line and the field.
fin::ChainOption parse(const std::string& line, int lineno) {
  std::vector<std::string> f;
  std::stringstream ss(line);
  for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
  const std::string at = "line " + std::to_string(lineno) + ": ";
  if (f.size() != 8)
    throw adi::InvalidArgument(at + std::to_string(f.size()) +
                               " fields; expected 8: type,exercise,spot,strike,maturity,volatility,rate,dividend");
  fin::ChainOption o;
  if (f[0] == "call") o.type = fin::OptionType::call;
  else if (f[0] == "put") o.type = fin::OptionType::put;
  else throw adi::InvalidArgument(at + "type '" + f[0] + "'; expected call or put");
  if (f[1] == "american") o.exercise = fin::Exercise::american;
  else if (f[1] == "european") o.exercise = fin::Exercise::european;
  else throw adi::InvalidArgument(at + "exercise '" + f[1] + "'; expected european or american");
  const char* names[] = {"spot", "strike", "maturity", "volatility", "rate", "dividend"};
  double* dst[] = {&o.spot, &o.strike, &o.maturity, &o.volatility, &o.rate, &o.dividend};
  for (int k = 0; k < 6; ++k) {
    std::size_t used = 0;
    try {
      *dst[k] = std::stod(f[2 + k], &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != f[2 + k].size())
      throw adi::InvalidArgument(at + names[k] + " '" + f[2 + k] + "' is not a number");
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Prices a CSV option chain as one batched ADI solve (adi::finance::price_chain)"};
  std::string input, output, backend = "host";
  long nodes = 201, steps = 100;
  int threads = 0;
  bool print = false;
  app.add_option("--input", input, "CSV: type,exercise,spot,strike,maturity,volatility,rate,dividend")->required();
  app.add_option("--output", output, "CSV to write (input columns + price,delta,gamma,theta); default: none");
  app.add_option("--nodes", nodes, "grid nodes per contract")->check(CLI::Range(5L, 100000L));
  app.add_option("--steps", steps, "time steps per contract")->check(CLI::Range(1L, 1000000L));
  app.add_option("--backend", backend, "host or cuda")->check(CLI::IsMember({"host", "cuda"}));
  app.add_option("--threads", threads, "host threads (0: all)")->check(CLI::Range(0, 4096));
  app.add_flag("--print", print, "print the output rows");
  CLI11_PARSE(app, argc, argv);
  try {
    std::ifstream in(input);
    if (!in) throw adi::InvalidArgument("--input: cannot open '" + input + "'");
    std::vector<fin::ChainOption> chain;
    std::vector<std::string> rows;
    int lineno = 0;
    for (std::string line; std::getline(in, line);) {
      ++lineno;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty() || line[0] == '#') continue;
      chain.push_back(parse(line, lineno));
      rows.push_back(line);
    }
    fin::Method me;
    me.nodes = nodes;
    me.steps = steps;
    me.scheme = adi::Scheme::douglas().with_damping(2);
    me.executor = backend == "cuda" ? adi::Executor::cuda() : adi::Executor::host(threads);
    const fin::ChainResult r = fin::price_chain(chain, me);
    std::FILE* out = output.empty() ? nullptr : std::fopen(output.c_str(), "w");
    if (!output.empty() && !out) throw adi::InvalidArgument("--output: cannot write '" + output + "'");
    auto emit = [&](std::FILE* f) {
      std::fprintf(f, "type,exercise,spot,strike,maturity,volatility,rate,dividend,price,delta,gamma,theta\n");
      for (std::size_t k = 0; k < chain.size(); ++k)
        std::fprintf(f, "%s,%.10g,%.10g,%.10g,%.10g\n", rows[k].c_str(), r.price[k], r.delta[k], r.gamma[k],
                     r.theta[k]);
    };
    if (out) {
      emit(out);
      std::fclose(out);
    }
    if (print) emit(stdout);
    std::printf("%zu contracts, grid %ld x %ld, %s: %.3f s stepping, %.3f s setup\n", chain.size(), nodes, steps,
                r.backend.c_str(), r.seconds, r.setup_seconds);
  } catch (const adi::Error& e) {
    std::fprintf(stderr, "option_chain: %s\n", e.what());
    return 1;
  }
  return 0;
}
