// The trace writer and reader together: what is written is read back, from several threads,
// and no damaged file makes the reader crash.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <thread>

#include "driver/ops.h"
#include "trace/trace_reader.h"
#include "trace/trace_writer.h"

namespace pygraph {
namespace {

std::string temp(const char* stem) {
  return "/tmp/pygraph-unit-" + std::to_string(getpid()) + "-" + stem;
}

void write_op(uint64_t value) {
  TraceWriter& w = trace_writer();
  uint8_t* p =
      w.begin(trace::RecordType::kOp, sizeof(trace::RecordHeader) + sizeof(trace::OpRecord));
  ASSERT_NE(p, nullptr);
  trace::OpRecord r{};
  r.seq = w.next_seq();
  r.tid = w.thread_id();
  r.op = static_cast<uint16_t>(Op::StreamSynchronize);
  r.ptr = value;
  std::memcpy(p, &r, sizeof r);
  w.commit();
}

TEST(Trace, RecordsFromManyThreadsAreReadBackInOrder) {
  const std::string path = temp("threads.trace");
  std::string error;
  ASSERT_TRUE(trace_writer().open(path, &error)) << error;
  constexpr int kThreads = 4, kPerThread = 30000;  // several chunks per thread
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < kPerThread; ++i) write_op(uint64_t(t) << 32 | i);
    });
  }
  for (auto& th : threads) th.join();
  trace_writer().close(7);

  Trace tr;
  ReadResult r = read_trace(path, &tr);
  unlink(path.c_str());
  ASSERT_EQ(r.status, ReadStatus::kOk) << r.message;
  ASSERT_EQ(tr.ops.size(), size_t(kThreads) * kPerThread);
  EXPECT_EQ(tr.end.unwrapped, 7u);
  EXPECT_EQ(tr.end.dropped, 0u);
  EXPECT_EQ(tr.threads.size(), size_t(kThreads));
  // Each thread's values appear in the order it wrote them, and none is lost or repeated.
  std::vector<int> next(kThreads, 0);
  for (const auto& e : tr.events) {
    const TraceOp& o = tr.ops[e.index];
    int t = int(o.ptr >> 32), i = int(o.ptr & 0xffffffff);
    ASSERT_LT(t, kThreads);
    EXPECT_EQ(i, next[t]++);
  }
}

TEST(Trace, PercentPBecomesThePidAndHeaderIsFilled) {
  std::string error;
  ASSERT_TRUE(trace_writer().open("/tmp/pygraph-unit-%p.trace", &error)) << error;
  write_op(1);
  trace_writer().close(0);
  const std::string path = "/tmp/pygraph-unit-" + std::to_string(getpid()) + ".trace";
  Trace tr;
  ASSERT_EQ(read_trace(path, &tr).status, ReadStatus::kOk);
  unlink(path.c_str());
  EXPECT_EQ(tr.header.pid, uint32_t(getpid()));
  EXPECT_EQ(tr.header.version, trace::kTraceVersion);
}

TEST(Trace, OpenFailureIsReported) {
  std::string error;
  EXPECT_FALSE(trace_writer().open("/nonexistent-dir/t.trace", &error));
  EXPECT_EQ(error, "No such file or directory");
  EXPECT_FALSE(trace_writer().is_open());
  EXPECT_EQ(trace_writer().begin(trace::RecordType::kOp, 64), nullptr);
}

TEST(Trace, DamagedFilesNeverCrashTheReader) {
  const std::string path = temp("good.trace");
  std::string error;
  ASSERT_TRUE(trace_writer().open(path, &error));
  for (int i = 0; i < 50; ++i) write_op(i);
  trace_writer().close(0);
  std::ifstream in(path, std::ios::binary);
  std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  unlink(path.c_str());

  std::mt19937 rng(12345);
  for (int round = 0; round < 3000; ++round) {
    std::string bad = good;
    int flips = 1 + rng() % 8;
    for (int f = 0; f < flips; ++f) bad[rng() % bad.size()] = char(rng());
    if (round % 3 == 0) bad.resize(rng() % bad.size());
    Trace tr;
    ReadResult r = parse_trace(reinterpret_cast<const uint8_t*>(bad.data()), bad.size(), &tr);
    if (r.status != ReadStatus::kOk) {
      EXPECT_FALSE(r.message.empty());
    }
  }
}

TEST(Trace, CutAtEveryByteReadsThePrefix) {
  const std::string path = temp("cut.trace");
  std::string error;
  ASSERT_TRUE(trace_writer().open(path, &error));
  for (int i = 0; i < 5; ++i) write_op(i);
  trace_writer().close(0);
  std::ifstream in(path, std::ios::binary);
  std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  unlink(path.c_str());
  size_t previous = 0;
  for (size_t n = sizeof(trace::FileHeader); n < good.size(); ++n) {
    Trace tr;
    ReadResult r = parse_trace(reinterpret_cast<const uint8_t*>(good.data()), n, &tr);
    EXPECT_EQ(r.status, ReadStatus::kIncomplete) << n;
    EXPECT_GE(tr.ops.size(), previous);  // more bytes never mean fewer records
    previous = tr.ops.size();
  }
  EXPECT_EQ(previous, 5u);
}

TEST(Ops, NamesAreUniqueAndRoundTrip) {
  std::set<std::string> names;
  for (int i = 0; i < int(Op::kCount); ++i) {
    Op op;
    ASSERT_TRUE(op_from_name(kOpInfo[i].name, &op));
    EXPECT_EQ(int(op), i);
    EXPECT_TRUE(names.insert(kOpInfo[i].name).second);
  }
  Op op;
  EXPECT_FALSE(op_from_name("cuNoSuchThing", &op));
  EXPECT_TRUE(op_is_boundary(Op::StreamSynchronize));
  EXPECT_TRUE(op_is_boundary(Op::MemcpyDtoH));
  EXPECT_TRUE(op_is_boundary(Op::MemFreeAsync));
  EXPECT_FALSE(op_is_boundary(Op::LaunchKernel));
  EXPECT_FALSE(op_is_boundary(Op::MemcpyHtoDAsync));
  EXPECT_FALSE(op_is_boundary(Op::EventRecord));
  // Queries observe GPU work (their call sites are recorded) but end no sequence.
  for (Op q : {Op::EventQuery, Op::StreamQuery}) {
    EXPECT_TRUE(op_observes_gpu(q));
    EXPECT_FALSE(op_is_boundary(q));
  }
  EXPECT_TRUE(op_observes_gpu(Op::EventSynchronize));
  EXPECT_TRUE(op_is_boundary(Op::EventSynchronize));
}

}  // namespace
}  // namespace pygraph
