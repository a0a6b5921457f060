// A Python process under the shim: call sites of boundary ops name the Python file and line.
#include <gtest/gtest.h>
#include <unistd.h>

#include "run_program.h"
#include "trace/trace_reader.h"

namespace pygraph::test {
namespace {

TEST(Python, SyncCallSitesNameThePythonLineWithAndWithoutTheGil) {
  const std::string path = temp_path("py.trace");
  RunResult r = run_program(
      {"python3", PYTHON_SCRIPT},
      {{"LD_PRELOAD", PYGRAPH_SHIM}, {"LD_LIBRARY_PATH", STANDIN_DIR}, {"PYGRAPH_TRACE", path}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t nl = r.out.find('\n');
  const std::string held_line = r.out.substr(0, nl);
  const std::string released_line = r.out.substr(nl + 1, r.out.find('\n', nl + 1) - nl - 1);
  Trace t;
  ReadResult rr = read_trace(path, &t);
  ASSERT_EQ(rr.status, ReadStatus::kOk) << rr.message;
  unlink(path.c_str());
  ASSERT_EQ(t.ops.size(), 2u);
  const std::string file = std::string("py:") + PYTHON_SCRIPT + ":";
  const struct {
    Op op;
    std::string line, function;
  } expected[] = {{Op::StreamSynchronize, held_line, "sync_holding_gil"},
                  {Op::CtxSynchronize, released_line, "sync_without_gil"}};
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(t.ops[i].op, expected[i].op);
    const TraceCallSite* cs = t.callsite(t.ops[i].callsite_id);
    ASSERT_NE(cs, nullptr);
    ASSERT_GE(cs->frames.size(), 2u);
    EXPECT_EQ(cs->frames[0], file + expected[i].line + " " + expected[i].function);
    EXPECT_EQ(cs->frames[1].rfind(file, 0), 0u) << cs->frames[1];  // the caller, module level
  }
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
