// End-to-end: door_program runs on the stand-in driver under LD_PRELOAD=libpygraph.so, and its
// trace must show every launch and op it made, through the door it used.
#include <cuda.h>
#include <glob.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <map>

#include "run_program.h"
#include "trace/trace_reader.h"

namespace pygraph::test {
namespace {

using trace::Door;

std::vector<std::pair<std::string, std::string>> shim_env(const std::string& trace_path) {
  return {{"LD_PRELOAD", PYGRAPH_SHIM},
          {"LD_LIBRARY_PATH", STANDIN_DIR},
          {"PYGRAPH_MODE", "trace"},
          {"PYGRAPH_TRACE", trace_path}};
}

struct Case {
  const char* arg;
  Door door;
};

class DoorTest : public ::testing::TestWithParam<Case> {};

std::map<Op, int> count_ops(const Trace& t) {
  std::map<Op, int> n;
  for (const auto& o : t.ops) n[o.op]++;
  return n;
}

TEST_P(DoorTest, TraceShowsEveryLaunchAndOpThroughTheDoorUsed) {
  const std::string path = temp_path("door.trace");
  RunResult r = run_program({DOOR_PROGRAM, GetParam().arg}, shim_env(path));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");  // a healthy run under the shim prints nothing

  Trace t;
  ReadResult rr = read_trace(path, &t);
  ASSERT_EQ(rr.status, ReadStatus::kOk) << rr.message;
  unlink(path.c_str());

  // 10 + Ex(attrs) + Ex(extra) + cooperative + CUkernel + 2 captured.
  ASSERT_EQ(t.launches.size(), 16u);
  for (const auto& l : t.launches) {
    EXPECT_EQ(l.door, GetParam().door);
    EXPECT_EQ(l.result, 0);
  }
  int plain = 0, ex = 0, coop = 0;
  for (const auto& l : t.launches) {
    plain += l.op == Op::LaunchKernel;
    ex += l.op == Op::LaunchKernelEx;
    coop += l.op == Op::LaunchCooperativeKernel;
  }
  EXPECT_EQ(plain, 13);
  EXPECT_EQ(ex, 2);
  EXPECT_EQ(coop, 1);

  // The first launch: axpy(2.0f, x, y, 64) with its argument bytes at the driver's offsets.
  const TraceLaunch& first = t.launches[0];
  const TraceFunction* f = t.function(first.function_id);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->name, "axpy");
  EXPECT_FALSE(f->is_kernel_handle);
  ASSERT_EQ(f->params.size(), 4u);
  EXPECT_EQ(f->params[1].offset, 8u);
  ASSERT_EQ(first.args.size(), 28u);
  float a;
  int n;
  std::memcpy(&a, first.args.data(), 4);
  std::memcpy(&n, first.args.data() + 24, 4);
  EXPECT_EQ(a, 2.0f);
  EXPECT_EQ(n, 64);
  EXPECT_EQ(first.grid[0], 1u);
  EXPECT_EQ(first.block[0], 64u);
  EXPECT_NE(first.stream, 0u);

  // cuLaunchKernelEx: geometry, shared memory and both attributes; then packed arguments.
  const TraceLaunch& with_attrs = t.launches[10];
  EXPECT_EQ(with_attrs.op, Op::LaunchKernelEx);
  EXPECT_EQ(with_attrs.grid[0], 2u);
  EXPECT_EQ(with_attrs.block[0], 32u);
  EXPECT_EQ(with_attrs.shared_mem, 128u);
  ASSERT_EQ(with_attrs.attrs.size(), 2u);
  EXPECT_EQ(with_attrs.attrs[0].id, CU_LAUNCH_ATTRIBUTE_PRIORITY);
  EXPECT_EQ(with_attrs.attrs[1].id, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
  const TraceLaunch& packed = t.launches[11];
  EXPECT_EQ(packed.flags, trace::kLaunchArgsFromExtra);
  EXPECT_EQ(packed.args.size(), 28u);  // the parameter block: the struct without its tail padding
  EXPECT_EQ(t.launches[12].op, Op::LaunchCooperativeKernel);

  // A CUkernel in the CUfunction slot is described through the cuKernel* calls.
  const TraceFunction* k = t.function(t.launches[13].function_id);
  ASSERT_NE(k, nullptr);
  EXPECT_TRUE(k->is_kernel_handle);
  EXPECT_EQ(k->name, "axpy");
  EXPECT_EQ(t.launches[13].args.size(), 28u);

  // Every op of the scenario, once each unless noted.
  std::map<Op, int> ops = count_ops(t);
  const std::map<Op, int> expected = {
      {Op::GraphLaunch, 1},
      {Op::StreamSynchronize, 1},
      {Op::StreamQuery, 1},
      {Op::StreamWaitEvent, 1},
      {Op::EventRecord, 1},
      {Op::EventRecordWithFlags, 1},
      {Op::EventSynchronize, 1},
      {Op::EventQuery, 1},
      {Op::CtxSynchronize, 1},
      {Op::LaunchHostFunc, 1},
      {Op::StreamAddCallback, 1},
      {Op::StreamBeginCapture, 1},
      {Op::StreamEndCapture, 1},
      {Op::StreamIsCapturing, 1},
      {Op::MemcpyHtoD, 1},
      {Op::MemcpyDtoH, 1},
      {Op::MemcpyDtoDAsync, 1},
      {Op::MemcpyDtoHAsync, 1},
      {Op::MemsetD32Async, 1},
      {Op::MemsetD8Async, 1},
      {Op::MemAlloc, 2},
      {Op::MemFree, 2},
      {Op::MemAllocAsync, 1},
      {Op::MemFreeAsync, 1},
      {Op::MemAllocHost, 1},
      {Op::MemFreeHost, 1},
      {Op::MemHostRegister, 1},
      {Op::MemHostUnregister, 1},
      {Op::MemAddressReserve, 1},
      {Op::MemCreate, 1},
      {Op::MemMap, 1},
      {Op::MemUnmap, 1},
      {Op::MemRelease, 1},
      {Op::MemAddressFree, 1},
      {Op::ModuleUnload, 1},
      {Op::LibraryUnload, 1},
  };
  for (const auto& [op, count] : expected) {
    EXPECT_EQ(ops[op], count) << op_info(op).name;
  }

  // Ops that observe GPU work (syncs, queries, frees, ...) carry a call site in the program; other
  // ops none. Allocations report their address.
  for (const auto& o : t.ops) {
    if (op_observes_gpu(o.op)) {
      const TraceCallSite* cs = t.callsite(o.callsite_id);
      ASSERT_NE(cs, nullptr) << op_info(o.op).name;
      bool in_program = false;
      for (const auto& frame : cs->frames) in_program |= frame.find("door_program") == 0;
      EXPECT_TRUE(in_program) << op_info(o.op).name << ": " << cs->frames.front();
      EXPECT_EQ(cs->frames.front().find("libpygraph"), std::string::npos);
    } else {
      EXPECT_EQ(o.callsite_id, 0u) << op_info(o.op).name;
    }
    if (o.op == Op::MemAlloc) {
      EXPECT_NE(o.ptr, 0u);
    }
  }
  // Events are in program order.
  for (size_t i = 1; i < t.events.size(); ++i) {
    auto seq = [&](const TraceEvent& e) {
      return e.is_launch ? t.launches[e.index].seq : t.ops[e.index].seq;
    };
    EXPECT_LT(seq(t.events[i - 1]), seq(t.events[i]));
  }
}

INSTANTIATE_TEST_SUITE_P(AllDoors, DoorTest,
                         ::testing::Values(Case{"export", Door::kExport},
                                           Case{"dlsym", Door::kDlsym},
                                           Case{"procaddr", Door::kProcAddr}),
                         [](const auto& info) { return std::string(info.param.arg); });

TEST(Fork, ChildRecordsStayOutOfTheParentsTrace) {
  const std::string path = temp_path("fork.trace");
  RunResult r = run_program({DOOR_PROGRAM, "procaddr", "--fork"}, shim_env(path));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Trace t;
  ReadResult rr = read_trace(path, &t);
  ASSERT_EQ(rr.status, ReadStatus::kOk) << rr.message;
  EXPECT_EQ(t.launches.size(), 16u);  // the parent's only
  // The child, which used CUDA, wrote a whole trace of its own beside the parent's.
  glob_t g;
  ASSERT_EQ(glob((path + ".*").c_str(), 0, nullptr, &g), 0);
  ASSERT_EQ(g.gl_pathc, 1u);
  Trace child;
  rr = read_trace(g.gl_pathv[0], &child);
  EXPECT_EQ(rr.status, ReadStatus::kOk) << rr.message;
  EXPECT_EQ(child.launches.size(), 16u);
  EXPECT_NE(child.header.pid, t.header.pid);
  unlink(g.gl_pathv[0]);
  globfree(&g);
  unlink(path.c_str());
}

TEST(ProcAddress, EachVersionAndVariantGetsItsOwnAbi) {
  const std::string path = temp_path("procaddr.trace");
  RunResult r = run_program({PROCADDR_PROGRAM}, shim_env(path));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Trace t;
  ReadResult rr = read_trace(path, &t);
  ASSERT_EQ(rr.status, ReadStatus::kOk) << rr.message;
  unlink(path.c_str());
  ASSERT_EQ(t.ops.size(), 3u);  // two cuCtxSynchronize ABIs, cuEventQuery
  EXPECT_EQ(t.ops[0].op, Op::CtxSynchronize);
  EXPECT_EQ(t.ops[1].op, Op::CtxSynchronize);
  EXPECT_EQ(t.ops[2].op, Op::EventQuery);
  for (const auto& o : t.ops) EXPECT_EQ(o.result, 0);
  ASSERT_EQ(t.launches.size(), 1u);
  EXPECT_EQ(t.launches[0].door, Door::kProcAddr);
  EXPECT_EQ(t.launches[0].args.size(), 4u);
  EXPECT_EQ(t.end.unwrapped, 1u);  // the pre-3.2 cuMemAlloc
}

TEST(Killed, TraceOfAKilledProcessIsReadUpToTheKill) {
  const std::string path = temp_path("killed.trace");
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  pid_t pid = fork();
  if (pid == 0) {
    for (const auto& [k, v] : shim_env(path)) setenv(k.c_str(), v.c_str(), 1);
    dup2(out[1], 1);
    execl(DOOR_PROGRAM, DOOR_PROGRAM, "export", "--hang", nullptr);
    _exit(127);
  }
  close(out[1]);
  char buf[16] = {};
  ASSERT_GT(read(out[0], buf, sizeof buf), 0);  // the scenario is done
  close(out[0]);
  usleep(300 * 1000);  // several writer periods
  kill(pid, SIGKILL);
  int status;
  waitpid(pid, &status, 0);
  Trace t;
  ReadResult rr = read_trace(path, &t);
  unlink(path.c_str());
  EXPECT_EQ(rr.status, ReadStatus::kIncomplete);
  EXPECT_NE(rr.message.find("no end record"), std::string::npos) << rr.message;
  EXPECT_EQ(t.launches.size(), 16u);  // everything made before the kill was written
}

TEST(Modes, OffModeWritesNoTraceAndChangesNothing) {
  const std::string path = temp_path("off.trace");
  auto env = shim_env(path);
  env[2].second = "off";
  RunResult r = run_program({DOOR_PROGRAM, "procaddr"}, env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("PYGRAPH_TRACE is set but PYGRAPH_MODE is off"), std::string::npos);
  EXPECT_NE(access(path.c_str(), F_OK), 0);
}

TEST(BadInput, UnknownModeIsOneLineAndTheProgramRunsOn) {
  const std::string path = temp_path("bad.trace");
  auto env = shim_env(path);
  env[2].second = "turbo";
  env.pop_back();
  RunResult r = run_program({DOOR_PROGRAM, "dlsym"}, env);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err,
            "pygraph: PYGRAPH_MODE='turbo' is not one of: graph, trace, off; running in off mode "
            "(passthrough)\n");
}

TEST(BadInput, UnwritableTracePathIsOneLineAndTheProgramRunsOn) {
  RunResult r = run_program({DOOR_PROGRAM, "export"}, shim_env("/nonexistent-dir/x.trace"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err,
            "pygraph: cannot write PYGRAPH_TRACE='/nonexistent-dir/x.trace': No such file or "
            "directory; running without a trace\n");
}

TEST(Inert, ProcessWithoutCudaSeesNothing) {
  RunResult r = run_program({"/bin/true"}, {{"LD_PRELOAD", PYGRAPH_SHIM},
                                            {"PYGRAPH_MODE", "turbo"},
                                            {"PYGRAPH_TRACE", "/nonexistent-dir/x"}});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace pygraph::test
