#pragma once
// SWC morphology files (the standard format of reconstructed neurons, one sample per line:
// `id type x y z radius parent`, parent -1 for the root, '#' starts a comment).
//
//   adi::io::SwcTree cell = adi::io::read_swc("cell.swc");
//   cell.samples[0] is the root; cell.parent[i] < i for every other sample.
//
// The reader validates everything a solver relies on and throws adi::InvalidArgument whose
// message names the file and line: a line without exactly seven fields, a field that is not
// a number (ids, types and parents must be integers), a negative radius, an id used twice,
// a parent id that no line defines, a sample that is its own ancestor (a cycle), no root or
// several roots. The samples come back renumbered in Hines order: a depth-first preorder
// from the root in which every parent precedes its children and the first child of a sample
// directly follows it, so that every unbranched run of samples has consecutive numbers.
#include <iosfwd>
#include <string>
#include <vector>

namespace adi::io {

// One line of an SWC file. Coordinates and radius in micrometres.
struct SwcSample {
  long id = 0;        // the file's id
  int type = 0;       // 1 soma, 2 axon, 3 basal dendrite, 4 apical dendrite, others user-defined
  double x = 0, y = 0, z = 0;
  double radius = 0;
  long parent_id = -1;  // the file's parent id, -1 for the root
  int line = 0;         // line number in the file (1-based), for messages
};

// A validated SWC tree in Hines order.
struct SwcTree {
  std::string source;               // file name (or the name given to parse_swc)
  std::vector<SwcSample> samples;   // samples[0] is the root
  std::vector<int> parent;          // parent[i] < i is the index of sample i's parent; parent[0] = -1
};

// Reads and validates an SWC file. Throws InvalidArgument ("<path>:<line>: ...") on bad
// content and Error when the file cannot be opened.
SwcTree read_swc(const std::string& path);

// Same for a stream; `source` names it in messages.
SwcTree parse_swc(std::istream& in, const std::string& source);

}  // namespace adi::io
