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

ResumePoint loop_after_segment(const Sequence& segment, const std::vector<Sequence>& sequences,
                               uint32_t min_repeats) {
  if (segment.periodic) return {};
  for (const Sequence& loop : sequences) {
    if (!loop.periodic || loop.occurrences < min_repeats) continue;
    const size_t p = loop.tokens.size();
    for (size_t phase = 0; phase < p; ++phase) {
      if (made_of_loop(segment, &loop, static_cast<uint32_t>(phase)))
        return {loop.id, static_cast<uint32_t>((phase + segment.tokens.size()) % p)};
    }
  }
  return {};
}

}  // namespace pygraph
