// Graph mode's own events written into the trace (format 2: FollowedRecord, ChunkRecord,
// ReplayRecord, FlushRecord, EagerRecord,
// DecisionRecord). The engine calls it only when PYGRAPH_TRACE is set
// (no observer otherwise: a null check is all graph mode pays), and only where it already does
// slow work; a recorded launch never reaches it.
#pragma once

#include "graph/engine_observer.h"
#include "recording/recorder.h"

namespace pygraph {

class TraceObserver : public EngineObserver {
 public:
  explicit TraceObserver(Recorder* recorder) : recorder_(recorder) {}
  void eager(bool memop, EagerReason reason) override;
  void flushed(FlushCause cause, Op op, size_t pending) override;
  void followed(uint32_t sequence, bool periodic, size_t length) override;
  void chunk_built(uint32_t sequence, uint32_t start, uint32_t end, size_t nodes) override;
  void replayed(uint32_t sequence, size_t nodes, uint32_t patched) override;
  void decided(uint32_t sequence, const std::string& signature, const SequencePolicy& policy,
               size_t length) override;

 private:
  Recorder* recorder_;
};

}  // namespace pygraph
