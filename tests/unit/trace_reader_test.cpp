// The trace reader on traces built byte by byte: what the fuzz target (tests/fuzz/
// trace_reader_fuzz.cpp) found, kept as tests that fail without their fixes.
#include "trace/trace_reader.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace pygraph {
namespace {

using namespace trace;

template <class R>
std::string bytes_of(const R& r) {
  return std::string(reinterpret_cast<const char*>(&r), sizeof r);
}

std::string file_header(uint32_t version = kTraceVersion) {
  FileHeader h{};
  std::memcpy(h.magic, kMagic, sizeof h.magic);
  h.version = version;
  h.header_size = sizeof h;
  return bytes_of(h);
}

std::string record(RecordType type, const std::string& payload) {
  const RecordHeader h{static_cast<uint16_t>(type), 0,
                       static_cast<uint32_t>(sizeof(RecordHeader) + payload.size())};
  return bytes_of(h) + payload;
}

std::string function_record(uint32_t id, const std::string& name) {
  FunctionRecord r{};
  r.id = id;
  r.name_len = static_cast<uint32_t>(name.size());
  r.param_count = kParamsUnknown;
  return record(RecordType::kFunction, bytes_of(r) + name);
}

std::string callsite_record(uint32_t id) {
  const CallSiteRecord r{id, 0};
  return record(RecordType::kCallSite, bytes_of(r));
}

std::string end_record(uint64_t dropped) {
  EndRecord e{};
  e.dropped = dropped;
  return record(RecordType::kEnd, bytes_of(e));
}

ReadResult parse(const std::string& b, Trace* t) {
  return parse_trace(reinterpret_cast<const uint8_t*>(b.data()), b.size(), t);
}

// UBSan in the fuzz build: `summary` bound a reference to t.end.dropped (nlohmann::json's
// assignment takes const T&), and the packed EndRecord after a bool sat at an odd address.
TEST(TraceReader, TheFileStructsItReturnsAreAligned) {
  Trace t;
  ASSERT_EQ(parse(file_header() + end_record(3), &t).status, ReadStatus::kOk);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(&t.end) % alignof(uint64_t), 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(&t.header) % alignof(uint64_t), 0u);
  const uint64_t& dropped = t.end.dropped;  // what json's operator= does
  EXPECT_EQ(dropped, 3u);
}

// Out of memory in the fuzz build: a function or call site id of millions in a file of a few
// bytes made the tables indexed by id that long (80 bytes a function: 1.3 GB for 1 << 24).
TEST(TraceReader, AnIdTheFileCannotHoldIsCorruptNotGigabytes) {
  Trace t;
  ReadResult r = parse(file_header() + function_record(1u << 20, "k") + end_record(0), &t);
  EXPECT_EQ(r.status, ReadStatus::kIncomplete);
  EXPECT_NE(r.message.find("corrupt record of type 1 at byte 40"), std::string::npos) << r.message;
  EXPECT_TRUE(t.functions.empty());

  r = parse(file_header() + callsite_record(1u << 20) + end_record(0), &t);
  EXPECT_EQ(r.status, ReadStatus::kIncomplete);
  EXPECT_NE(r.message.find("corrupt record of type 2 at byte 40"), std::string::npos) << r.message;
  EXPECT_TRUE(t.callsites.empty());
}

TEST(TraceReader, IdsOutOfOrderAndWithAGapStillRead) {
  // Threads write in blocks, so a higher id may come first; a dropped announcement leaves a gap.
  Trace t;
  const ReadResult r = parse(file_header() + function_record(4, "d") + function_record(1, "a") +
                                 callsite_record(3) + end_record(1),
                             &t);
  ASSERT_EQ(r.status, ReadStatus::kOk) << r.message;
  ASSERT_EQ(t.functions.size(), 4u);
  EXPECT_EQ(t.function(4)->name, "d");
  EXPECT_EQ(t.function(1)->name, "a");
  EXPECT_EQ(t.function(2), nullptr);
  ASSERT_EQ(t.callsites.size(), 3u);
  EXPECT_NE(t.callsite(3), nullptr);
  EXPECT_EQ(t.callsite(1), nullptr);
}

// The fuzz target on CI (session 26): an end record, then a cut one (no room for its fields).
// The second unsaid the first: the reader returned no end for the records before the corrupt
// one. It keeps what it read: the first end, and the message names the second.
TEST(TraceReader, ACorruptEndRecordLeavesTheGoodOneBeforeIt) {
  Trace t;
  const std::string cut_end = record(RecordType::kEnd, "");
  const ReadResult r = parse(file_header() + end_record(7) + cut_end, &t);
  EXPECT_EQ(r.status, ReadStatus::kIncomplete);
  const std::string at = "corrupt record of type 5 at byte " +
                         std::to_string(file_header().size() + end_record(7).size());
  EXPECT_EQ(r.message.rfind(at, 0), 0u) << r.message;
  EXPECT_TRUE(t.has_end);
  EXPECT_EQ(t.end.dropped, 7u);
}

}  // namespace
}  // namespace pygraph
