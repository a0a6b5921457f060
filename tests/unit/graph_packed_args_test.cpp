// Launches with packed arguments (`extra`: CU_LAUNCH_PARAM_BUFFER_POINTER / _SIZE / _END, as NCCL
// launches) in graph mode, on the driver stand-in: with a known layout the block is the kernel's
// parameters and the node is an ordinary one; with an unknown layout the node takes the block
// through `extra`, and so does a block smaller than a known layout's parameters (NCCL's); all are
// patched when the block changes. A block larger than the parameters, one beside kernelParams,
// or other `extra` entries stay eager, with the driver's own result. Results are
// compared bit for bit with the same launches made eagerly.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <vector>

#include "graph/graph_engine.h"
#include "standin.h"
#include "standin_driver_api.h"

namespace pygraph {
namespace {

constexpr int kN = 32;

// y = a * x + y * 0.5, over n elements: (float, float*, float*, int), 28 bytes of parameters.
void axpy(const unsigned*, const unsigned*, void** p) {
  const float a = *static_cast<float*>(p[0]);
  auto* x = reinterpret_cast<float*>(*static_cast<CUdeviceptr*>(p[1]));
  auto* y = reinterpret_cast<float*>(*static_cast<CUdeviceptr*>(p[2]));
  const int n = *static_cast<int*>(p[3]);
  for (int i = 0; i < n; ++i) y[i] = a * x[i] + y[i] * 0.5f;
}

// The packed block, laid out as the kernel's parameters.
struct Block {
  float a;
  uint32_t pad;
  CUdeviceptr x, y;
  int n;
};
constexpr size_t kParamBytes = offsetof(Block, n) + sizeof(int);  // no tail padding

using test::take;

class GraphPackedArgsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::fill_standin_driver_api(&api_);
    take(&launch_, "cuLaunchKernel");
    const size_t sizes[4] = {4, 8, 8, 4};
    known_ = test::standin_kernel(&table_, "packed_axpy", &axpy, 4, sizes);
    // The same kernel once more, whose layout the driver will not give.
    standin_register_kernel("packed_opaque", &axpy, 4, sizes);
    standin_hide_layout("packed_opaque");
    decltype(&cuModuleGetFunction) get_function;
    take(&get_function, "cuModuleGetFunction");
    CUfunction f = nullptr;
    ASSERT_EQ(get_function(&f, nullptr, "packed_opaque"), CUDA_SUCCESS);
    bool created;
    opaque_ = table_.lookup(reinterpret_cast<uint64_t>(f), &created);
    ASSERT_TRUE(known_->params_known);
    ASSERT_EQ(known_->arg_bytes, kParamBytes);
    ASSERT_FALSE(opaque_->params_known);
    for (int i = 0; i < kN; ++i) {
      x_[i] = float(i % 5) - 2.0f;
      y_engine_[i] = y_eager_[i] = float(i);
    }
  }

  enum class Args { kParams, kPacked, kParamsAndPacked, kOtherKey };

  // One launch of `f` in each arm, its arguments passed as `how` says (a packed block of `size`
  // bytes); the program scribbles over its block right after the call, as it may. Returns what
  // the engine returned, after checking the direct launch returned the same. `block`: a block
  // size per position in a step makes each launch of a step a token of its own (no loop is
  // found inside a step).
  CUresult both(const FunctionInfo* f, Args how, float a, unsigned block = 32,
                size_t size = kParamBytes) {
    CUresult results[2];
    for (int arm = 0; arm < 2; ++arm) {
      float* y = arm == 0 ? y_engine_ : y_eager_;
      Block packed{a, 0, reinterpret_cast<CUdeviceptr>(x_), reinterpret_cast<CUdeviceptr>(y), kN};
      void* params[] = {&packed.a, &packed.x, &packed.y, &packed.n};
      void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                       CU_LAUNCH_PARAM_END};
      if (how == Args::kOtherKey) extra[0] = reinterpret_cast<void*>(3);
      void** p = how == Args::kParams || how == Args::kParamsAndPacked ? params : nullptr;
      void** e = how == Args::kParams ? nullptr : extra;
      const CUfunction fn = reinterpret_cast<CUfunction>(f->handle);
      if (arm == 0) {
        EngineLaunch l{};
        l.op = Op::LaunchKernel;
        l.function = fn;
        l.info = f;
        l.grid[0] = l.grid[1] = l.grid[2] = 1;
        l.block[0] = block;
        l.block[1] = l.block[2] = 1;
        l.params = p;
        l.extra = e;
        l.eager = reinterpret_cast<void*>(launch_);
        results[arm] = engine_.launch(l);
      } else {
        results[arm] = launch_(fn, 1, 1, 1, block, 1, 1, 0, nullptr, p, e);
      }
      std::memset(&packed, 0xab, sizeof packed);  // the driver read it during the call
    }
    EXPECT_EQ(results[0], results[1]);
    return results[0];
  }

  void host_read(const char* when) {
    ASSERT_EQ(engine_.before_op(Op::StreamSynchronize, nullptr, false), CUDA_SUCCESS);
    ASSERT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0) << when;
    engine_.after_op(Op::StreamSynchronize, nullptr, false, CUDA_SUCCESS);
  }

  uint64_t eager(EagerReason r) const { return engine_.stats().eager[static_cast<int>(r)]; }
  void expect_all_accounted() {
    ASSERT_TRUE(engine_.idle());
    const EngineStats& s = engine_.stats();
    EXPECT_EQ(s.launches, s.replayed + s.eager_total());
    EXPECT_EQ(s.graph_failures, 0u);
  }

  static EngineOptions chunks_from_8() {
    EngineOptions o;
    o.first_chunk = 8;
    return o;
  }

  DriverApi api_;
  FunctionTable table_{&api_};
  GraphEngine engine_{&api_, chunks_from_8()};
  decltype(&cuLaunchKernel) launch_ = nullptr;
  const FunctionInfo* known_ = nullptr;
  const FunctionInfo* opaque_ = nullptr;
  float x_[kN], y_engine_[kN], y_eager_[kN];
};

TEST_F(GraphPackedArgsTest, PackedBlocksOfAKnownLayoutAreOrdinaryNodesPatchedLikeOthers) {
  // Steps of 10 launches, every other one packed; the packed launches' scalar changes every step.
  for (int n = 1; n <= 6; ++n) {
    for (int i = 0; i < 10; ++i) {
      if (i % 2) {
        ASSERT_EQ(both(known_, Args::kPacked, 0.25f * float(n), 32 + i), CUDA_SUCCESS);
      } else {
        ASSERT_EQ(both(known_, Args::kParams, 1.5f, 32 + i), CUDA_SUCCESS);
      }
    }
    host_read(("step " + std::to_string(n)).c_str());
  }
  const EngineStats& s = engine_.stats();
  EXPECT_EQ(s.replayed, 4u * 10u);
  EXPECT_EQ(s.patched_nodes, 3u * 5u);  // the packed nodes of every replayed step but the first
  EXPECT_EQ(eager(EagerReason::kPackedArgs) + eager(EagerReason::kPackedArgsSize), 0u);
  expect_all_accounted();
}

TEST_F(GraphPackedArgsTest, PackedBlocksOfAnUnknownLayoutAreNodesThroughExtra) {
  for (int n = 1; n <= 6; ++n) {
    for (int i = 0; i < 10; ++i) {
      ASSERT_EQ(both(opaque_, Args::kPacked, i == 3 ? 0.5f * float(n) : 0.75f, 32 + i),
                CUDA_SUCCESS);
    }
    host_read(("step " + std::to_string(n)).c_str());
  }
  const EngineStats& s = engine_.stats();
  // The kernel's block size is seen to launch eagerly once first (step 1's first launch, which
  // ends that step's segment there), so steps 2 and 3 find the step and 4..6 replay it.
  EXPECT_EQ(eager(EagerReason::kPackedArgsSize), 1u);
  EXPECT_EQ(s.replayed, 3u * 10u);
  EXPECT_EQ(s.patched_nodes, 2u);  // launch 3's block changes every step
  // The same kernel through kernelParams: no layout, no node.
  for (int i = 0; i < 4; ++i) ASSERT_EQ(both(opaque_, Args::kParams, 1.0f), CUDA_SUCCESS);
  host_read("kernelParams of an unknown layout");
  EXPECT_EQ(eager(EagerReason::kUnknownLayout), 4u);
  expect_all_accounted();
}

TEST_F(GraphPackedArgsTest, ABlockTheDriverRefusesIsNeverRecorded) {
  // An unknown layout and a block larger than the kernel's parameters: the driver refuses every
  // such launch, and the program must see that every time, however often the step repeats (a
  // recorded launch would return success and fail later, where no call can report it).
  // The refused launch comes last in a step of recordable launches, so that "3 launches and the
  // refused one" repeats as a segment (its failure ends the segment at it).
  for (int n = 1; n <= 6; ++n) {
    for (int i = 0; i < 3; ++i) ASSERT_EQ(both(known_, Args::kParams, 0.5f, 32 + i), CUDA_SUCCESS);
    EXPECT_NE(both(opaque_, Args::kPacked, 0.5f, 40, kParamBytes + 8), CUDA_SUCCESS) << n;
    host_read("refused blocks");
  }
  EXPECT_EQ(engine_.stats().eager[static_cast<int>(EagerReason::kLaunchError)], 0u);
  EXPECT_EQ(eager(EagerReason::kPackedArgsSize), 6u);
}

TEST_F(GraphPackedArgsTest, RecordedBlocksOfAnUnknownLayoutGoOutEagerlyThroughExtra) {
  // A flush mid-chunk sends recorded packed launches of an unknown layout out one by one: they
  // must carry their blocks through `extra` (the program's own blocks are long overwritten).
  for (int n = 1; n <= 3; ++n) {
    for (int i = 0; i < 10; ++i) {
      ASSERT_EQ(both(opaque_, Args::kPacked, 0.1f * float(i + n), 32 + i), CUDA_SUCCESS);
    }
    host_read("step");
  }
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(both(opaque_, Args::kPacked, 0.2f * float(i), 32 + i), CUDA_SUCCESS);
  }
  ASSERT_EQ(both(known_, Args::kParams, 2.0f), CUDA_SUCCESS);  // not the sequence's next
  host_read("after the mismatch");
  EXPECT_EQ(engine_.stats().mismatches, 1u);
  EXPECT_EQ(eager(EagerReason::kMismatch), 3u);
  expect_all_accounted();
}

TEST_F(GraphPackedArgsTest, SmallerBlocksAreNodesThroughExtraLargerOnesStayEager) {
  // A kernel whose parameters end in space it reads only as far as the block reaches (NCCL's
  // 4 KiB parameter, of which a launch passes the part it uses): a block that stops before that
  // space is smaller than the parameters. The driver takes it; the node takes it through
  // `extra` as the driver does, and is patched when the block changes.
  const size_t sizes[5] = {4, 8, 8, 4, 64};
  const FunctionInfo* tail = test::standin_kernel(&table_, "packed_axpy_tail", &axpy, 5, sizes);
  ASSERT_TRUE(tail->params_known);
  ASSERT_GT(tail->arg_bytes, kParamBytes);
  for (int n = 1; n <= 6; ++n) {
    for (int i = 0; i < 4; ++i) {
      ASSERT_EQ(both(tail, Args::kPacked, i == 2 ? 0.5f * float(n) : 1.0f, 32 + i), CUDA_SUCCESS);
    }
    // Larger than the parameters (the tail padding of a struct): the driver refuses it, every
    // time, and so does the engine.
    EXPECT_EQ(both(known_, Args::kPacked, 1.0f, 40, sizeof(Block)),
              CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    host_read(("step " + std::to_string(n)).c_str());
  }
  const EngineStats& s = engine_.stats();
  // Steps 1-2 find the step (its refused launch ends each segment), 3-6 replay it.
  EXPECT_EQ(s.replayed, 4u * 4u);
  EXPECT_EQ(s.patched_nodes, 3u);  // launch 2's block changes every step
  EXPECT_EQ(eager(EagerReason::kPackedArgsSize), 6u);
  expect_all_accounted();
}

TEST_F(GraphPackedArgsTest, ExtraBesideKernelParamsOrWithOtherEntriesStaysEager) {
  for (int n = 1; n <= 4; ++n) {
    for (int i = 0; i < 4; ++i) {
      // The driver refuses kernelParams with a block (measured on an H100).
      EXPECT_EQ(both(known_, Args::kParamsAndPacked, 1.0f), CUDA_ERROR_INVALID_VALUE);
      EXPECT_EQ(both(known_, Args::kOtherKey, 1.0f), CUDA_ERROR_INVALID_VALUE);
    }
    host_read("refused");
  }
  EXPECT_EQ(engine_.stats().recorded, 0u);
  EXPECT_EQ(eager(EagerReason::kPackedArgs), 4u * 8u);
  expect_all_accounted();
}

}  // namespace
}  // namespace pygraph
