// Context switches in graph mode, on the driver stand-in: a switch to the context already
// current (compiled PyTorch code calls cuCtxSetCurrent once per iteration) submits nothing and
// ends nothing, so a loop that makes one in every step replays exactly as the same loop without
// it; a switch to another context submits what was recorded (flush_rules.h, kContext). Results
// are compared bit for bit with the same launches made eagerly.
#include <cudaTypedefs.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "graph/graph_engine.h"
#include "standin.h"
#include "standin_driver_api.h"
#include "test_kernels.h"

namespace pygraph {
namespace {

constexpr int kN = test::kKernelFloats;

using test::add_kernel;
using test::scale_kernel;

using test::take;

// What each step does between its 5th and 6th launch (and, for kToOtherAndBack, between its 8th
// and 9th).
enum class Switch { kNone, kSetSame, kPushPopSame, kToOtherAndBack, kCreateAndPop };

class GraphContextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::fill_standin_driver_api(&api_);
    take(&launch_, "cuLaunchKernel");
    take(&set_current_, "cuCtxSetCurrent");
    take(&create_, "cuCtxCreate_v2");
    take(&push_, "cuCtxPushCurrent_v2");
    take(&pop_, "cuCtxPopCurrent_v2");
    const size_t sizes[2] = {4, 8};
    scale_ = test::standin_kernel(&table_, "context_scale", &scale_kernel, 2, sizes);
    add_ = test::standin_kernel(&table_, "context_add", &add_kernel, 2, sizes);
    a_ = standin_context_create();
    b_ = standin_context_create();
    ASSERT_EQ(push_(a_), CUDA_SUCCESS);  // the program's context
  }
  void TearDown() override {
    CUcontext popped;
    pop_(&popped);
  }

  // A context op as the hooks make it: the engine before and after the real call.
  template <class Call>
  void context_op(GraphEngine& e, Op op, Call call) {
    ASSERT_EQ(e.before_op(op, nullptr, false), CUDA_SUCCESS);
    ASSERT_EQ(call(), CUDA_SUCCESS);
    e.after_op(op, nullptr, false, CUDA_SUCCESS);
  }

  // Launch `i` of a step (scale and add by turns, a block per position: a token per position,
  // so no loop is found inside a step) with scalar `a` or step `n`, through the engine and
  // directly.
  void both(GraphEngine& e, int i, float a, int n, CUdeviceptr ye, CUdeviceptr yr) {
    void* scalar = i % 2 ? static_cast<void*>(&n) : &a;
    const FunctionInfo* f = i % 2 ? add_ : scale_;
    void* pe[] = {scalar, &ye};
    void* pr[] = {scalar, &yr};
    const EngineLaunch l = test::engine_launch(Op::LaunchKernel, reinterpret_cast<void*>(launch_),
                                               f, 1, 32 + i, nullptr, pe);
    ASSERT_EQ(e.launch(l), CUDA_SUCCESS);
    ASSERT_EQ(launch_(l.function, 1, 1, 1, 32 + i, 1, 1, 0, nullptr, pr, nullptr), CUDA_SUCCESS);
  }

  // 12 steps of 12 launches ending in a host read, with `what` in the middle of each; returns
  // the engine's stats.
  EngineStats run(Switch what) {
    GraphEngine e{&api_};
    float y_engine[kN], y_eager[kN];
    for (int i = 0; i < kN; ++i) y_engine[i] = y_eager[i] = float(i) * 0.25f;
    CUdeviceptr ye = reinterpret_cast<CUdeviceptr>(y_engine);
    CUdeviceptr yr = reinterpret_cast<CUdeviceptr>(y_eager);
    CUcontext popped;
    for (int n = 1; n <= 12; ++n) {
      for (int i = 0; i < 12; ++i) {
        if (i == 5 && what == Switch::kSetSame) {
          context_op(e, Op::CtxSetCurrent, [&] { return set_current_(a_); });
        } else if (i == 5 && what == Switch::kPushPopSame) {
          context_op(e, Op::CtxPushCurrent, [&] { return push_(a_); });
        } else if (i == 7 && what == Switch::kPushPopSame) {
          context_op(e, Op::CtxPopCurrent, [&] { return pop_(&popped); });
        } else if (i == 5 && what == Switch::kToOtherAndBack) {
          context_op(e, Op::CtxSetCurrent, [&] { return set_current_(b_); });
        } else if (i == 8 && what == Switch::kToOtherAndBack) {
          context_op(e, Op::CtxSetCurrent, [&] { return set_current_(a_); });
        } else if (i == 5 && what == Switch::kCreateAndPop) {
          CUcontext made = nullptr;  // a new context, current from here on
          context_op(e, Op::CtxCreate, [&] { return create_(&made, 0, 0); });
        } else if (i == 8 && what == Switch::kCreateAndPop) {
          context_op(e, Op::CtxPopCurrent, [&] { return pop_(&popped); });
        }
        both(e, i, 0.5f, n, ye, yr);
      }
      EXPECT_EQ(e.before_op(Op::StreamSynchronize, nullptr, false), CUDA_SUCCESS);
      EXPECT_EQ(std::memcmp(y_engine, y_eager, sizeof y_engine), 0) << "step " << n;
      e.after_op(Op::StreamSynchronize, nullptr, false, CUDA_SUCCESS);
    }
    CUcontext current = nullptr;
    EXPECT_EQ(api_.ctx_get_current(&current), CUDA_SUCCESS);
    EXPECT_EQ(current, a_);
    EXPECT_TRUE(e.idle());
    EXPECT_EQ(e.stats().launches, e.stats().replayed + e.stats().eager_total());
    return e.stats();
  }

  DriverApi api_;
  FunctionTable table_{&api_};
  decltype(&cuLaunchKernel) launch_ = nullptr;
  decltype(&cuCtxSetCurrent) set_current_ = nullptr;
  PFN_cuCtxCreate_v3020 create_ = nullptr;  // cuda.h declares only the newest ABI
  decltype(&cuCtxPushCurrent_v2) push_ = nullptr;
  decltype(&cuCtxPopCurrent_v2) pop_ = nullptr;
  const FunctionInfo* scale_ = nullptr;
  const FunctionInfo* add_ = nullptr;
  CUcontext a_ = nullptr, b_ = nullptr;
};

TEST_F(GraphContextTest, SwitchesToTheCurrentContextChangeNothing) {
  const EngineStats none = run(Switch::kNone);
  ASSERT_EQ(none.replayed, 10u * 12u);  // steps 3..12
  for (Switch what : {Switch::kSetSame, Switch::kPushPopSame}) {
    const EngineStats s = run(what);
    const std::string name = what == Switch::kSetSame ? "set" : "push/pop";
    EXPECT_EQ(s.replayed, none.replayed) << name;
    EXPECT_EQ(s.replays, none.replays) << name;  // no chunk cut where the switch was
    EXPECT_EQ(s.graphs_built, none.graphs_built) << name;
    EXPECT_EQ(s.flushes_total(), 0u) << name;
    EXPECT_EQ(s.mismatches, 0u) << name;
  }
}

TEST_F(GraphContextTest, ASwitchToAnotherContextSubmitsWhatWasRecorded) {
  const EngineStats none = run(Switch::kNone);
  const EngineStats s = run(Switch::kToOtherAndBack);
  // Every replayed step: the chunk recorded in A goes out at the switch to B, the launches made
  // in B go out at the switch back.
  EXPECT_EQ(s.flushes_by_op[static_cast<int>(Op::CtxSetCurrent)], 2u * 10u);
  EXPECT_GT(s.replays, none.replays);
  EXPECT_EQ(s.mismatches, 0u);
}

TEST_F(GraphContextTest, CreatingAContextMakesItCurrentAndSubmitsWhatWasRecorded) {
  // cuCtxCreate pushes the new context: the chunk recorded in A goes out at once, as at a switch.
  const EngineStats s = run(Switch::kCreateAndPop);
  EXPECT_EQ(s.flushes_by_op[static_cast<int>(Op::CtxCreate)], 10u);
  EXPECT_EQ(s.mismatches, 0u);
}

TEST_F(GraphContextTest, AWindowOfOneContextNeverReplaysAGraphOfAnother) {
  // The same launches in two contexts in one segment (the same layers on two devices): tokens
  // do not name the context. From step 6, a query cuts context b's block, so b's chunks begin
  // at new places whose work is what a's block holds (chunk_windows.h). Before the context was
  // compared, b's window [8, 12) replayed the graph of a's [2, 6), built in a (review of
  // 3977474).
  GraphEngine e{&api_};
  float y_engine[kN], y_eager[kN];
  for (int i = 0; i < kN; ++i) y_engine[i] = y_eager[i] = float(i) * 0.25f;
  CUdeviceptr ye = reinterpret_cast<CUdeviceptr>(y_engine);
  CUdeviceptr yr = reinterpret_cast<CUdeviceptr>(y_eager);
  for (int n = 1; n <= 12; ++n) {
    for (int block = 0; block < 2; ++block) {
      CUcontext to = block ? b_ : a_;
      context_op(e, Op::CtxSetCurrent, [&] { return set_current_(to); });
      for (int i = 0; i < 6; ++i) {
        if (i == 2 && block == 1 && n >= 6) {
          ASSERT_EQ(e.before_op(Op::StreamQuery, nullptr, false), CUDA_SUCCESS);
          e.after_op(Op::StreamQuery, nullptr, false, CUDA_SUCCESS);
        }
        ASSERT_NO_FATAL_FAILURE(both(e, i, 0.5f + float(block), n, ye, yr));
      }
    }
    context_op(e, Op::CtxSetCurrent, [&] { return set_current_(a_); });
    ASSERT_EQ(e.before_op(Op::StreamSynchronize, nullptr, false), CUDA_SUCCESS);
    ASSERT_EQ(std::memcmp(y_engine, y_eager, sizeof y_engine), 0) << "step " << n;
    e.after_op(Op::StreamSynchronize, nullptr, false, CUDA_SUCCESS);
  }
  const EngineStats& s = e.stats();
  EXPECT_GT(s.replays, 20u);
  EXPECT_EQ(s.replays_borrowed, 0u);  // no window of b holds work a window of b held before
}

}  // namespace
}  // namespace pygraph
