#include "adi/io/swc.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <istream>
#include <string_view>
#include <unordered_map>

#include "adi/error.hpp"

namespace adi::io {
namespace {

const char* const kFieldNames[7] = {"id", "type", "x", "y", "z", "radius", "parent"};

[[noreturn]] void fail(const std::string& source, int line, const std::string& what) {
  throw InvalidArgument(source + ":" + std::to_string(line) + ": " + what);
}

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == ',')) ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t' && s[j] != '\r' && s[j] != ',') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

long parse_integer(std::string_view f, const std::string& source, int line, int field) {
  long v = 0;
  const char* end = f.data() + f.size();
  const char* b = f.data() + (!f.empty() && f[0] == '+' ? 1 : 0);
  const auto r = std::from_chars(b, end, v);
  if (r.ec != std::errc() || r.ptr != end)
    fail(source, line,
         std::string("field ") + std::to_string(field + 1) + " (" + kFieldNames[field] + ") = '" + std::string(f) +
             "' is not an integer");
  return v;
}

double parse_real(std::string_view f, const std::string& source, int line, int field) {
  double v = 0;
  const char* end = f.data() + f.size();
  const char* b = f.data() + (!f.empty() && f[0] == '+' ? 1 : 0);
  const auto r = std::from_chars(b, end, v);
  if (r.ec != std::errc() || r.ptr != end || !std::isfinite(v))
    fail(source, line,
         std::string("field ") + std::to_string(field + 1) + " (" + kFieldNames[field] + ") = '" + std::string(f) +
             "' is not a finite number");
  return v;
}

}  // namespace

SwcTree parse_swc(std::istream& in, const std::string& source) {
  std::vector<SwcSample> raw;
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    std::string_view s(text);
    if (const auto hash = s.find('#'); hash != std::string_view::npos) s = s.substr(0, hash);
    const std::vector<std::string_view> f = split(s);
    if (f.empty()) continue;
    if (f.size() != 7)
      fail(source, line,
           "expected 7 fields 'id type x y z radius parent', found " + std::to_string(f.size()));
    SwcSample p;
    p.line = line;
    p.id = parse_integer(f[0], source, line, 0);
    p.type = static_cast<int>(parse_integer(f[1], source, line, 1));
    p.x = parse_real(f[2], source, line, 2);
    p.y = parse_real(f[3], source, line, 3);
    p.z = parse_real(f[4], source, line, 4);
    p.radius = parse_real(f[5], source, line, 5);
    p.parent_id = parse_integer(f[6], source, line, 6);
    if (p.id < 0) fail(source, line, "id " + std::to_string(p.id) + " is negative; ids must be >= 0");
    if (p.radius < 0) fail(source, line, "negative radius " + std::string(f[5]) + "; radii must be >= 0");
    if (p.parent_id < -1)
      fail(source, line, "parent " + std::to_string(p.parent_id) + " is neither -1 (root) nor an id");
    if (p.parent_id == p.id)
      fail(source, line, "sample " + std::to_string(p.id) + " is its own parent (a cycle)");
    raw.push_back(p);
  }
  if (in.bad()) throw Error(source + ": read error");
  if (raw.empty()) throw InvalidArgument(source + ": no samples (an SWC file needs at least a root line)");

  const int n = static_cast<int>(raw.size());
  std::unordered_map<long, int> index_of;
  index_of.reserve(raw.size());
  int root = -1;
  for (int i = 0; i < n; ++i) {
    const auto [it, fresh] = index_of.emplace(raw[i].id, i);
    if (!fresh)
      fail(source, raw[i].line,
           "id " + std::to_string(raw[i].id) + " already used on line " + std::to_string(raw[it->second].line));
    if (raw[i].parent_id == -1) {
      if (root >= 0)
        fail(source, raw[i].line,
             "several roots (parent -1): line " + std::to_string(raw[root].line) + " and this line; " +
                 "a file must hold one connected neuron");
      root = i;
    }
  }
  if (root < 0) {
    // A deleted root line (often the soma) leaves its children pointing at an id no line
    // defines: say so before suspecting a cycle.
    for (int i = 0; i < n; ++i)
      if (index_of.find(raw[i].parent_id) == index_of.end())
        fail(source, raw[i].line,
             "parent " + std::to_string(raw[i].parent_id) + " of sample " + std::to_string(raw[i].id) +
                 " is not defined on any line (missing parent), and no sample has parent -1: the root "
                 "line (the soma's, in most files) is missing");
    throw InvalidArgument(source + ": no root (a sample with parent -1); the parents form a cycle");
  }

  // Children lists in file order (CSR), then an iterative preorder from the root.
  std::vector<int> parent_raw(raw.size(), -1), first(raw.size() + 1, 0);
  for (int i = 0; i < n; ++i) {
    if (i == root) continue;
    const auto it = index_of.find(raw[i].parent_id);
    if (it == index_of.end())
      fail(source, raw[i].line,
           "parent " + std::to_string(raw[i].parent_id) + " of sample " + std::to_string(raw[i].id) +
               " is not defined on any line (missing parent)");
    parent_raw[i] = it->second;
    ++first[it->second + 1];
  }
  for (int i = 0; i < n; ++i) first[i + 1] += first[i];
  std::vector<int> children(raw.size()), fill(first.begin(), first.end() - 1);
  for (int i = 0; i < n; ++i)
    if (i != root) children[fill[parent_raw[i]]++] = i;

  SwcTree tree;
  tree.source = source;
  tree.samples.reserve(raw.size());
  tree.parent.reserve(raw.size());
  std::vector<int> new_index(raw.size(), -1);
  std::vector<int> stack{root};
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    new_index[i] = static_cast<int>(tree.samples.size());
    tree.samples.push_back(raw[i]);
    tree.parent.push_back(i == root ? -1 : new_index[parent_raw[i]]);
    // Pushed in reverse so that the first child in the file is visited next.
    for (int c = first[i + 1] - 1; c >= first[i]; --c) stack.push_back(children[c]);
  }
  // Samples the preorder never reached hang off a cycle (a loop of parents with no root).
  if (static_cast<int>(tree.samples.size()) != n)
    for (int i = 0; i < n; ++i)
      if (new_index[i] < 0)
        fail(source, raw[i].line,
             "sample " + std::to_string(raw[i].id) + " is not connected to the root: its parents form a cycle");
  return tree;
}

SwcTree read_swc(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("read_swc: cannot open '" + path + "': " + std::strerror(errno));
  return parse_swc(in, path);
}

}  // namespace adi::io
