// Measured decisions in the engine (decision_policy.h), on the stand-in with a clock the test
// drives: a sequence runs windows of graph and eager occurrences in turn, keeps its graphs when
// they are faster, runs eagerly when they are not, measures again later; results stay equal to
// eager execution throughout.
#include <gtest/gtest.h>

#include <cstring>

#include "graph/graph_engine.h"
#include "standin.h"
#include "standin_driver_api.h"
#include "test_kernels.h"

namespace pygraph {
namespace {

constexpr int kN = test::kKernelFloats;
uint64_t g_now = 1;
uint64_t fake_clock() {
  return g_now;
}

class GraphDecisionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::fill_standin_driver_api(&api_);
    test::take(&launch_, "cuLaunchKernel");
    const size_t sizes[2] = {4, 8};
    scale_ = test::standin_kernel(&table_, "decision_scale", &test::scale_kernel, 2, sizes);
    add_ = test::standin_kernel(&table_, "decision_add", &test::add_kernel, 2, sizes);
    for (int i = 0; i < kN; ++i) y_engine_[i] = y_eager_[i] = float(i) * 0.25f;
    g_now = 1;
  }

  void make_engine(uint64_t recheck = 2000) {
    EngineOptions o;
    o.measure = true;
    o.clock_ns = &fake_clock;
    o.policy.recheck_iterations = recheck;
    engine_ = std::make_unique<GraphEngine>(&api_, o);
  }

  void launch(int i, int n) {
    float a = 0.5f;
    const FunctionInfo* f = i % 2 ? add_ : scale_;
    void* scalar = i % 2 ? static_cast<void*>(&n) : &a;
    CUdeviceptr ye = reinterpret_cast<CUdeviceptr>(y_engine_);
    CUdeviceptr yr = reinterpret_cast<CUdeviceptr>(y_eager_);
    void* pe[] = {scalar, &ye};
    void* pr[] = {scalar, &yr};
    // A block per position: no loop inside the step.
    ASSERT_EQ(engine_->launch(test::engine_launch(
                  Op::LaunchKernel, reinterpret_cast<void*>(launch_), f, 1, 32 + i, nullptr, pe)),
              CUDA_SUCCESS);
    ASSERT_EQ(launch_(reinterpret_cast<CUfunction>(f->handle), 1, 1, 1, 32 + i, 1, 1, 0, nullptr,
                      pr, nullptr),
              CUDA_SUCCESS);
  }

  // A step of 20 launches and a host read; the clock moves by what the step's arm costs.
  // Returns whether it ran as graphs.
  bool step(int n, uint64_t graph_ns, uint64_t eager_ns) {
    const uint64_t replayed = engine_->stats().replayed;
    for (int i = 0; i < 20; ++i) launch(i, n);
    EXPECT_EQ(engine_->before_op(Op::StreamSynchronize, nullptr, false), CUDA_SUCCESS);
    EXPECT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0) << "step " << n;
    engine_->after_op(Op::StreamSynchronize, nullptr, false, CUDA_SUCCESS);
    const bool graphed = engine_->stats().replayed > replayed;
    g_now += graphed ? graph_ns : eager_ns;
    return graphed;
  }

  DriverApi api_;
  FunctionTable table_{&api_};
  std::unique_ptr<GraphEngine> engine_;
  decltype(&cuLaunchKernel) launch_ = nullptr;
  const FunctionInfo* scale_ = nullptr;
  const FunctionInfo* add_ = nullptr;
  float y_engine_[kN], y_eager_[kN];
};

TEST_F(GraphDecisionTest, GraphsThatPayAreKeptAfterMeasuring) {
  make_engine();
  int graphed = 0, eager = 0;
  for (int n = 1; n <= 51; ++n) (step(n, 800'000, 1'000'000) ? graphed : eager)++;
  // Steps 1-2 find the sequence; 3..50 are 6 windows of 8 (graph, eager, ...), the 51st
  // occurrence's start decides.
  const EngineStats& s = engine_->stats();
  EXPECT_EQ(s.decided_graph, 1u);
  EXPECT_EQ(s.decided_eager, 0u);
  EXPECT_EQ(eager, 2 + 24);
  const int measuring = static_cast<int>(EagerReason::kMeasuring);
  EXPECT_EQ(s.eager[measuring], 24u * 20u);
  for (int n = 52; n <= 60; ++n) EXPECT_TRUE(step(n, 800'000, 1'000'000)) << n;
  EXPECT_EQ(s.launches, s.replayed + s.eager_total());
}

TEST_F(GraphDecisionTest, GraphsThatDoNotPayRunEagerlyAndAreTriedAgainLater) {
  make_engine(/*recheck=*/20);
  for (int n = 1; n <= 51; ++n) step(n, 1'000'000, 1'000'000);  // no gain
  const EngineStats& s = engine_->stats();
  EXPECT_EQ(s.decided_eager, 1u);
  const uint64_t decided = s.eager[static_cast<int>(EagerReason::kDecidedEager)];
  for (int n = 52; n <= 60; ++n) EXPECT_FALSE(step(n, 1'000'000, 1'000'000)) << n;
  EXPECT_GT(s.eager[static_cast<int>(EagerReason::kDecidedEager)], decided);
  // After 20 eager occurrences the sequence is measured again, and graphs replay meanwhile.
  bool graphed_again = false;
  for (int n = 61; n <= 90; ++n) graphed_again = step(n, 1'000'000, 1'000'000) || graphed_again;
  EXPECT_TRUE(graphed_again);
  EXPECT_EQ(s.measurements, 2u);
  EXPECT_EQ(s.launches, s.replayed + s.eager_total());
}

TEST_F(GraphDecisionTest, OffByDefaultEverySequenceIsGraphed) {
  engine_ = std::make_unique<GraphEngine>(&api_, EngineOptions{});
  for (int n = 1; n <= 60; ++n) step(n, 1'000'000, 800'000);  // graphs slower: no matter
  const EngineStats& s = engine_->stats();
  EXPECT_EQ(s.replayed, 58u * 20u);
  EXPECT_EQ(s.measurements + s.decided_graph + s.decided_eager, 0u);
}

TEST_F(GraphDecisionTest, ALoopWithoutSyncsIsMeasuredByItsUnrolledPeriod) {
  make_engine();
  // A 5-launch loop: each launch costs 10 us eagerly, 6 us recorded (the clock moves per launch).
  for (int it = 0; it < 2000; ++it) {
    for (int i = 0; i < 5; ++i) {
      const uint64_t recorded = engine_->stats().recorded;
      launch(i, it);
      g_now += engine_->stats().recorded > recorded ? 6'000 : 10'000;
    }
  }
  ASSERT_EQ(engine_->before_op(Op::CtxSynchronize, nullptr, false), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0);
  const EngineStats& s = engine_->stats();
  EXPECT_EQ(s.decided_graph, 1u);
  EXPECT_GT(s.replayed, s.launches * 8 / 10);
}

}  // namespace
}  // namespace pygraph
