// Trace format 2: graph mode's events and memop details written through the shim's own writer
// read back field for field; version-1 files still read; newer versions, garbage and cuts are
// refused or reported with a clear message.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "graph/engine_stats.h"
#include "recording/recorder.h"
#include "recording/trace_observer.h"
#include "trace/trace_reader.h"
#include "trace/trace_writer.h"

namespace pygraph {
namespace {

std::string write_events() {
  const std::string path = "/tmp/pygraph-unit-" + std::to_string(getpid()) + "-v2.trace";
  Config config;
  config.trace_path = path;
  Recorder recorder(nullptr, /*skip_own_frames=*/false);
  std::string error;
  EXPECT_TRUE(recorder.start(config, &error)) << error;
  TraceObserver o(&recorder);
  o.followed(7, true, 12);
  o.chunk_built(7, 2, 6, 4);
  o.replayed(7, 4, 1);
  o.flushed(FlushCause::kOp, Op::StreamSynchronize, 3);
  o.flushed(FlushCause::kStall, Op::kCount, 2);
  o.eager(false, EagerReason::kShortChunk);
  o.eager(true, EagerReason::kMismatch);
  SequencePolicy cached;
  cached.adopt(false, "cached");
  o.decided(7, "sig-7", cached, 12);
  OpCall copy{Op::MemcpyHtoDAsync, trace::Door::kExport, 0x10, 0, 0x2000, 64};
  copy.memop = true;
  copy.src = 0x3000;
  recorder.record_op(copy, 1, 2, CUDA_SUCCESS);
  OpCall set{Op::MemsetD32Async, trace::Door::kExport, 0x10, 0, 0x4000, 8};
  set.memop = true;
  set.value = 0xdeadbeef;
  recorder.record_op(set, 3, 4, CUDA_SUCCESS);
  recorder.stop();
  return path;
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

ReadResult parse(const std::string& b, Trace* t) {
  return parse_trace(reinterpret_cast<const uint8_t*>(b.data()), b.size(), t);
}

TEST(TraceV2, EveryEngineRecordAndMemopDetailRoundTrips) {
  const std::string path = write_events();
  Trace t;
  ASSERT_EQ(read_trace(path, &t).status, ReadStatus::kOk);
  unlink(path.c_str());
  const TraceEngineEvents& e = t.engine;
  ASSERT_EQ(e.followed.size(), 1u);
  EXPECT_EQ(e.followed[0].sequence, 7u);
  EXPECT_TRUE(e.followed[0].periodic);
  EXPECT_EQ(e.followed[0].length, 12u);
  ASSERT_EQ(e.chunks.size(), 1u);
  EXPECT_EQ(e.chunks[0].start, 2u);
  EXPECT_EQ(e.chunks[0].end, 6u);
  EXPECT_EQ(e.chunks[0].nodes, 4u);
  ASSERT_EQ(e.replays.size(), 1u);
  EXPECT_EQ(e.replays[0].nodes, 4u);
  EXPECT_EQ(e.replays[0].patched, 1u);
  ASSERT_EQ(e.flushes.size(), 2u);
  EXPECT_EQ(e.flushes[0].op, Op::StreamSynchronize);
  EXPECT_EQ(e.flushes[0].pending, 3u);
  EXPECT_NE(t.callsite(e.flushes[0].callsite_id), nullptr);  // announced before the flush
  EXPECT_EQ(e.flushes[1].cause, uint8_t(FlushCause::kStall));
  EXPECT_EQ(e.flushes[1].callsite_id, 0u);
  ASSERT_EQ(e.eager.size(), 2u);
  EXPECT_EQ(e.eager[0].reason, uint8_t(EagerReason::kShortChunk));
  EXPECT_FALSE(e.eager[0].memop);
  EXPECT_TRUE(e.eager[1].memop);
  EXPECT_LT(e.followed[0].seq, e.chunks[0].seq);  // one counter with launches and ops
  ASSERT_EQ(e.decisions.size(), 1u);
  EXPECT_EQ(e.decisions[0].sequence, 7u);
  EXPECT_EQ(e.decisions[0].signature, "sig-7");
  EXPECT_EQ(e.decisions[0].verdict, trace::DecisionVerdict::kEager);
  EXPECT_EQ(e.decisions[0].source, trace::DecisionSource::kCached);
  EXPECT_EQ(e.decisions[0].launches, 12u);
  EXPECT_EQ(e.decisions[0].eager_ns, 0.0);  // adopted: no figures
  EXPECT_LT(e.eager[1].seq, e.decisions[0].seq);
  ASSERT_EQ(t.ops.size(), 2u);
  EXPECT_TRUE(t.ops[0].has_detail);
  EXPECT_EQ(t.ops[0].src, 0x3000u);
  EXPECT_EQ(t.ops[0].dst_kind, trace::MemoryKind::kUnknown);  // no driver to ask here
  EXPECT_EQ(t.ops[1].value, 0xdeadbeefu);
}

TEST(TraceV2, VersionOneFilesStillReadAndCannotHoldVersionTwoRecords) {
  const std::string path = write_events();
  std::string b = bytes_of(path);
  unlink(path.c_str());
  uint32_t one = 1;
  std::memcpy(&b[offsetof(trace::FileHeader, version)], &one, 4);
  Trace t;
  ReadResult r = parse(b, &t);
  EXPECT_EQ(r.status, ReadStatus::kIncomplete);  // the first engine record is out of place
  EXPECT_NE(r.message.find("corrupt record of type 7"), std::string::npos) << r.message;
  // A version-1 file as the shim wrote it: the checked-in golden traces.
  ASSERT_EQ(read_trace(GOLDEN_DIR "/door_program.trace", &t).status, ReadStatus::kOk);
  EXPECT_EQ(t.header.version, 1u);
  EXPECT_GT(t.ops.size(), 0u);
  EXPECT_TRUE(t.engine.empty());
  for (const TraceOp& o : t.ops) EXPECT_FALSE(o.has_detail);
}

TEST(TraceV2, NewerVersionsGarbageAndCutsAreReportedClearly) {
  const std::string path = write_events();
  const std::string good = bytes_of(path);
  unlink(path.c_str());
  std::string newer = good;
  const uint32_t three = trace::kTraceVersion + 1;
  std::memcpy(&newer[offsetof(trace::FileHeader, version)], &three, 4);
  Trace t;
  ReadResult r = parse(newer, &t);
  EXPECT_EQ(r.status, ReadStatus::kError);
  EXPECT_NE(r.message.find("version " + std::to_string(three) + " is newer"), std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("(" + std::to_string(trace::kTraceVersion) + ")"), std::string::npos);

  r = parse("GARBAGE!" + good.substr(8), &t);
  EXPECT_EQ(r.status, ReadStatus::kError);
  EXPECT_EQ(r.message, "not a pygraph trace (bad magic)");

  r = parse(good.substr(0, good.size() - 30), &t);  // into the last records
  EXPECT_EQ(r.status, ReadStatus::kIncomplete);
  EXPECT_NE(r.message.find("trace truncated at byte"), std::string::npos) << r.message;

  // An engine record of the wrong size is corrupt, not misread.
  std::string bad = good;
  const size_t first = sizeof(trace::FileHeader);
  trace::RecordHeader h;
  size_t off = first;
  for (;;) {
    std::memcpy(&h, &bad[off], sizeof h);
    if (h.type == uint16_t(trace::RecordType::kFollowed)) break;
    off += h.size;
  }
  h.size -= 4;
  std::memcpy(&bad[off], &h, sizeof h);
  r = parse(bad, &t);
  EXPECT_EQ(r.status, ReadStatus::kIncomplete);
  EXPECT_NE(r.message.find("corrupt record of type 7"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace pygraph
