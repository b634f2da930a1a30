// Prices an option chain read from a CSV file as one batch (adi::finance::price_chain) and
// writes prices and greeks (delta, gamma, theta per year) as CSV.
//
//   option_chain --input chain.csv --output prices.csv [--nodes 201] [--steps 100]
//                [--backend host|cuda] [--threads N] [--print]
//
// Input rows: type,exercise,spot,strike,maturity,volatility,rate,dividend (call|put,
// european|american; maturity in years; rates continuously compounded); '#' starts a
// comment line, and a first row starting "type," is a header. Output rows: the input
// columns, then price,delta,gamma,theta (such a file can be read again: its last four
// columns are ignored). Exit codes: README "Exit codes" (examples/common/cli.hpp):
// 2 for a bad option or a bad row (named by its line), 77 for --backend cuda without a GPU.
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
#include "common/cli.hpp"

namespace fin = adi::finance;

namespace {

// One CSV row; throws adi::InvalidArgument naming the line and the field.
// `row`: the row's 8 input fields (a row of this program's output has 4 more).
fin::ChainOption parse(const std::string& line, int lineno, std::string& row) {
  std::vector<std::string> f;
  std::stringstream ss(line);
  for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
  const std::string at = "line " + std::to_string(lineno) + ": ";
  // 12 fields: a row of this program's own output (its price,delta,gamma,theta are ignored).
  if (f.size() != 8 && f.size() != 12)
    throw adi::InvalidArgument(at + std::to_string(f.size()) +
                               " fields; expected 8: type,exercise,spot,strike,maturity,volatility,rate,dividend "
                               "(or 12: a row of option_chain's output)");
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
  row = f[0];
  for (int k = 1; k < 8; ++k) row += "," + f[k];
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Prices a CSV option chain as one batched ADI solve (adi::finance::price_chain)"};
  std::string input, output, backend = "cpu";
  long nodes = 201, steps = 100;
  int threads = 0;
  bool print = false;
  app.add_option("--input", input, "CSV: type,exercise,spot,strike,maturity,volatility,rate,dividend")->required();
  app.add_option("--output", output, "CSV to write (input columns + price,delta,gamma,theta); default: none");
  app.add_option("--nodes", nodes, "grid nodes per contract")->check(example::integer(5, 100000))->capture_default_str();
  app.add_option("--steps", steps, "time steps per contract")->check(example::integer(1, 1000000))->capture_default_str();
  app.add_option("--backend", backend, "cpu (host is the same) or cuda")
      ->check(CLI::IsMember({"cpu", "host", "cuda"}))
      ->capture_default_str();
  app.add_option("--threads", threads, "host threads (0: all)")->check(example::integer(0, 4096))->capture_default_str();
  app.add_flag("--print", print, "print the output rows");
  if (const auto rc = example::parse(app, "option_chain", argc, argv)) return *rc;
  return example::guarded("option_chain", [&] {
    fin::Method me;
    me.nodes = nodes;
    me.steps = steps;
    me.scheme = adi::Scheme::douglas().with_damping(2);
    me.executor = backend == "cuda" ? example::cuda_executor("--backend cpu") : adi::Executor::host(threads);
    // Before any work: the output file can be written (opened for appending, so nothing is lost yet).
    if (!output.empty()) {
      std::FILE* probe = std::fopen(output.c_str(), "a");
      if (!probe) throw example::UsageError("--output: cannot write '" + output + "'");
      std::fclose(probe);
    }
    std::ifstream in(input);
    if (!in) throw example::UsageError("--input: cannot open '" + input + "'");
    std::vector<fin::ChainOption> chain;
    std::vector<std::string> rows;
    std::vector<int> row_lines;
    int lineno = 0;
    bool first = true;
    for (std::string line; std::getline(in, line);) {
      ++lineno;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty() || line[0] == '#') continue;
      const bool header = first && line.rfind("type,", 0) == 0;
      first = false;
      if (header) continue;
      std::string row;
      chain.push_back(parse(line, lineno, row));
      rows.push_back(row);
      row_lines.push_back(lineno);
    }
    if (chain.empty()) throw example::UsageError("--input: '" + input + "' holds no contract rows");
    fin::ChainResult r;
    try {
      r = fin::price_chain(chain, me);
    } catch (const adi::InvalidArgument& e) {  // "price_chain: contract K: ...": name the CSV line
      const std::string m = e.what(), key = "price_chain: contract ";
      if (m.rfind(key, 0) != 0) throw;
      const std::size_t k = std::stoul(m.substr(key.size())), colon = m.find(": ", key.size());
      if (k >= row_lines.size() || colon == std::string::npos) throw;
      throw adi::InvalidArgument("line " + std::to_string(row_lines[k]) + " of " + input + ": " + m.substr(colon + 2));
    }
    for (std::size_t k = 0; k < chain.size(); ++k)
      example::require_finite(r.price[k], "the price of contract " + std::to_string(k),
                              "(line " + std::to_string(row_lines[k]) + " of " + input + ")");
    auto emit = [&](std::FILE* f) {
      std::fprintf(f, "type,exercise,spot,strike,maturity,volatility,rate,dividend,price,delta,gamma,theta\n");
      for (std::size_t k = 0; k < chain.size(); ++k)
        std::fprintf(f, "%s,%.10g,%.10g,%.10g,%.10g\n", rows[k].c_str(), r.price[k], r.delta[k], r.gamma[k],
                     r.theta[k]);
    };
    if (!output.empty()) {
      std::FILE* out = std::fopen(output.c_str(), "w");
      if (!out) throw example::RunFailure("--output: cannot write '" + output + "'");
      emit(out);
      if (std::fclose(out) != 0) throw example::RunFailure("--output: writing '" + output + "' failed");
    }
    if (print) emit(stdout);
    std::printf("%zu contracts, grid %ld x %ld, %s: %.3f s stepping, %.3f s setup\n", chain.size(), nodes, steps,
                r.backend.c_str(), r.seconds, r.setup_seconds);
    return example::exit_ok;
  });
}
