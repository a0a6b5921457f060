// A Python process under the shim: call sites of boundary ops name the Python file and line.
#include <gtest/gtest.h>
#include <unistd.h>

#include "run_program.h"
#include "trace_reader.h"

namespace pygraph::test {
namespace {

TEST(Python, SyncCallSiteNamesThePythonLine) {
  const std::string path = temp_path("py.trace");
  RunResult r = run_program({"python3", PYTHON_SCRIPT}, {{"LD_PRELOAD", PYGRAPH_SHIM},
                                                         {"LD_LIBRARY_PATH", STANDIN_DIR},
                                                         {"PYGRAPH_TRACE", path}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string line = r.out.substr(0, r.out.find('\n'));
  Trace t;
  ReadResult rr = read_trace(path, &t);
  ASSERT_EQ(rr.status, ReadStatus::kOk) << rr.message;
  unlink(path.c_str());
  ASSERT_EQ(t.ops.size(), 1u);
  EXPECT_EQ(t.ops[0].op, Op::StreamSynchronize);
  const TraceCallSite* cs = t.callsite(t.ops[0].callsite_id);
  ASSERT_NE(cs, nullptr);
  ASSERT_GE(cs->frames.size(), 2u);
  EXPECT_EQ(cs->frames[0], std::string("py:") + PYTHON_SCRIPT + ":" + line + " sync_here");
  EXPECT_EQ(cs->frames[1].rfind(std::string("py:") + PYTHON_SCRIPT + ":", 0), 0u);
}

TEST(Python, InterpreterWithoutCudaSeesNothing) {
  RunResult r = run_program({"python3", "-c", "print('ok')"},
                            {{"LD_PRELOAD", PYGRAPH_SHIM}, {"PYGRAPH_MODE", "bogus"}});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "ok\n");
  EXPECT_EQ(r.err, "");
}

}  // namespace
}  // namespace pygraph::test
