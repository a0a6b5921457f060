// The pygraph trace format: one definition shared by the writer (in the shim) and the reader
// (in the analyzer and the tests). docs/trace-format.md describes it for outsiders.
//
// A trace is a file header followed by records. Every record starts with a RecordHeader giving
// its type and total size, so a reader can skip what it does not need and can tell a record cut
// short by a kill from a complete one. All integers are little-endian, as written by x86-64 and
// aarch64 Linux. Records of different threads interleave in blocks; `seq` gives the global order.
//
// Versioning: kTraceVersion grows whenever a record's layout changes or a record type is added.
// A reader refuses versions newer than it knows, with a message naming both versions.
#pragma once

#include <cstdint>

namespace pygraph::trace {

inline constexpr char kMagic[8] = {'P', 'Y', 'G', 'T', 'R', 'A', 'C', 'E'};
// 2: memop details after an op record; graph mode's own events (records 7 to 12).
inline constexpr uint32_t kTraceVersion = 2;

// How a call reached the shim: the three doors to the driver's entry points.
enum class Door : uint8_t {
  kExport = 0,    // the program called our exported symbol (linked with -lcuda)
  kDlsym = 1,     // the program took the pointer from dlsym on libcuda
  kProcAddr = 2,  // the program took the pointer from cuGetProcAddress
  kCount
};
const char* door_name(Door door);

#pragma pack(push, 1)

struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t header_size;  // sizeof(FileHeader) of the writer, so later versions can grow it
  uint32_t pid;
  uint32_t reserved;
  uint64_t start_mono_ns;  // CLOCK_MONOTONIC at the start; record timestamps use the same clock
  uint64_t start_real_ns;  // CLOCK_REALTIME at the same moment, to place the trace in time
};

enum class RecordType : uint16_t {
  kFunction = 1,  // FunctionRecord: a kernel seen for the first time
  kCallSite = 2,  // CallSiteRecord: a call site seen for the first time
  kLaunch = 3,    // LaunchRecord: one kernel launch
  kOp = 4,        // OpRecord: one non-launch driver call
  kEnd = 5,       // EndRecord: written at a clean exit; its absence means the process died
  kThread = 6,    // ThreadRecord: a thread seen for the first time
  // Version 2: what graph mode did, written only when it runs with a trace.
  kFollowed = 7,   // FollowedRecord: the engine began following a sequence (its first time)
  kChunk = 8,      // ChunkRecord: a graph was built for a chunk of a sequence
  kReplay = 9,     // ReplayRecord: a chunk ran as a graph replay
  kFlush = 10,     // FlushRecord: recorded work was submitted before its chunk was complete
  kEager = 11,     // EagerRecord: a launch or memop went to the driver as a plain call
  kDecision = 12,  // DecisionRecord: a sequence's measured decision was reached or changed
};

struct RecordHeader {
  uint16_t type;  // RecordType
  uint16_t reserved;
  uint32_t size;  // whole record, header included
};

// Followed by name (name_len bytes, no NUL) and param_count ParamLayout entries.
struct FunctionRecord {
  uint32_t id;  // 1-based; launches refer to it
  uint32_t name_len;
  uint32_t param_count;  // kParamsUnknown when the driver could not say
  uint32_t flags;        // kFunctionIsKernelHandle
  uint64_t handle;       // CUfunction or CUkernel value, for matching against other tools
};
inline constexpr uint32_t kParamsUnknown = 0xffffffffu;
inline constexpr uint32_t kFunctionIsKernelHandle = 1;  // a CUkernel arrived in the CUfunction slot

struct ParamLayout {
  uint32_t offset;
  uint32_t size;
};

// Followed by frame_count frames, each a uint16_t length and that many bytes of text:
// "py:FILE:LINE FUNC" for Python frames (innermost first), then "MODULE!SYMBOL+0xOFF" for native
// frames (innermost first).
struct CallSiteRecord {
  uint32_t id;  // 1-based; ops refer to it
  uint32_t frame_count;
};

struct ThreadRecord {
  uint32_t tid;     // small per-trace thread number used by records
  uint32_t os_tid;  // gettid()
};

// Followed by attr_count LaunchAttr, then arg_bytes bytes of packed kernel arguments laid out
// as ParamLayout says (or the `extra` buffer as given, with kLaunchArgsFromExtra).
struct LaunchRecord {
  uint64_t seq;
  uint64_t ts_ns;   // CLOCK_MONOTONIC when the call entered the shim
  uint32_t dur_ns;  // time spent in the driver call
  uint16_t tid;     // ThreadRecord.tid
  uint8_t door;     // Door
  uint8_t flags;    // kLaunchArgs*
  uint16_t op;      // Op
  uint16_t attr_count;
  uint32_t function_id;
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t shared_mem;
  int32_t result;  // CUresult returned to the program
  uint64_t stream;
  uint32_t arg_bytes;
};
inline constexpr uint8_t kLaunchArgsFromExtra = 1;  // arguments came as a packed `extra` buffer
inline constexpr uint8_t kLaunchArgsUnknown = 2;    // parameter layout unknown: no argument bytes

struct LaunchAttr {
  uint32_t id;  // CUlaunchAttributeID
  uint32_t pad;
  uint8_t value[64];  // CUlaunchAttributeValue, verbatim
};

struct OpRecord {
  uint64_t seq;
  uint64_t ts_ns;
  uint32_t dur_ns;
  uint16_t tid;
  uint8_t door;
  uint8_t reserved;
  uint16_t op;  // Op
  uint16_t reserved2;
  int32_t result;
  uint32_t callsite_id;  // 0: none recorded
  uint64_t stream;       // first CUstream argument, 0 if none
  uint64_t handle;       // first event, graph exec, module or library argument
  uint64_t ptr;          // first device or host address argument (after the call for allocations)
  uint64_t bytes;        // first size argument
};

// Version 2: follows an OpRecord of an async memset or 1-D copy (the record's size says whether
// it is there), so that `simulate` can give the engine what graph mode was given: without the
// source and kinds it has to guess which copies stage, and without the value which memsets patch.
struct MemopDetail {
  uint64_t src;      // copies: the source address; memsets: 0
  uint32_t value;    // memsets: the element value; copies: 0
  uint8_t dst_kind;  // MemoryKind of the destination
  uint8_t src_kind;  // MemoryKind of the source (copies)
  uint16_t reserved;
};

// What cuPointerGetAttribute(MEMORY_TYPE) said of an address, as graph mode classifies it:
// device memory, pinned host memory, pageable host memory (the driver does not know it), or
// something else (managed, array, an error). The numbers are graph mode's own (MemKind).
enum class MemoryKind : uint8_t {
  kUnknown = 0,
  kDevice = 1,
  kPinned = 2,
  kPageable = 3,
  kOther = 4
};

// Graph mode's events. Each carries a seq from the same counter as launches and ops, so they
// sort into the program's calls: an event seen while handling a call comes before that call's
// own record, which is written once the call returns.
struct FollowedRecord {
  uint64_t seq;
  uint32_t sequence;  // the detector's sequence id
  uint32_t length;    // launches and memops in one occurrence (a loop: one period)
  uint8_t periodic;   // 1: a loop without boundaries, followed around
  uint8_t reserved[7];
};

struct ChunkRecord {
  uint64_t seq;
  uint32_t sequence;
  uint32_t start, end;  // positions in the followed sequence
  uint32_t nodes;
};

struct ReplayRecord {
  uint64_t seq;
  uint32_t sequence;
  uint32_t nodes;
  uint32_t patched;  // nodes whose parameters were updated before the launch
  uint32_t reserved;
};

struct FlushRecord {
  uint64_t seq;
  uint8_t cause;  // FlushCause (engine_stats.h)
  uint8_t reserved;
  uint16_t op;           // cause "op": the Op that can observe the work; else Op::kCount
  uint32_t pending;      // launches and memops submitted
  uint32_t callsite_id;  // cause "op": where the program made that call; 0: none
  uint32_t reserved2;
};

// Launches or memops that went eagerly. The launch (or op) record of the call being handled
// follows with a higher seq on the same thread; a short chunk or a mismatch sends out work
// recorded earlier, whose records came before.
struct EagerRecord {
  uint64_t seq;
  uint8_t reason;  // EagerReason (engine_stats.h)
  uint8_t memop;   // 1: an async memset or copy, 0: a launch
  uint16_t reserved;
  uint32_t count;  // this many, for one reason
};

// A sequence's verdict reached or changed (decisions/decision_policy.h): by measuring, from the
// cache, or by the config's kernel patterns; and back to measuring when a verdict is measured
// again. Followed by signature_len bytes of its signature (signature.h; empty while its nodes
// are not all named yet), so that `breaks` can name it and match it against the cache file.
struct DecisionRecord {
  uint64_t seq;
  uint32_t sequence;  // the detector's sequence id, as in FollowedRecord
  uint8_t verdict;    // DecisionVerdict
  uint8_t source;     // DecisionSource
  uint16_t signature_len;
  double eager_ns;    // median iteration of the eager windows (0: not measured)
  double graph_ns;    // median iteration of the graph windows (0: not measured)
  uint32_t launches;  // launches and memops in one occurrence of the sequence
  uint32_t reserved;
};
enum class DecisionVerdict : uint8_t { kMeasuring = 0, kGraph = 1, kEager = 2, kCount };
enum class DecisionSource : uint8_t { kMeasured = 0, kCached = 1, kConfig = 2, kCount };
const char* decision_verdict_name(DecisionVerdict v);
const char* decision_source_name(DecisionSource s);

struct EndRecord {
  uint64_t records;    // records written before this one
  uint64_t dropped;    // records lost (buffers unavailable)
  uint64_t unwrapped;  // entry points handed out without a wrapper (see README)
  uint64_t dur_ns;     // time from start to end
};

#pragma pack(pop)

}  // namespace pygraph::trace
