#include "graph/loop_resume.h"

namespace pygraph {

bool made_of_loop(const Sequence& segment, const Sequence* loop, uint32_t phase) {
  if (!loop || !loop->periodic || loop->tokens.empty()) return false;
  const size_t p = loop->tokens.size();
  if (segment.tokens.size() < p) return false;
  for (size_t i = 0; i < segment.tokens.size(); ++i) {
    if (segment.tokens[i] != loop->tokens[(phase + i) % p]) return false;
  }
  return true;
}

}  // namespace pygraph
