// Measured decisions in the engine (decision_policy.h), on the stand-in with a clock the test
// drives: a sequence runs windows of graph and eager occurrences in turn, keeps its graphs when
// they are faster, runs eagerly when they are not, measures again later; results stay equal to
// eager execution throughout.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>

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

// A store in memory: `verdict` answers every lookup ("" for none); records are kept.
class FakeStore : public DecisionStore {
 public:
  const Decision* find(const std::string& signature) override {
    asked.push_back(signature);
    if (verdict.empty()) return nullptr;
    answer.verdict = verdict;
    return &answer;
  }
  void record(const std::string& signature, const Decision& d) override { recorded[signature] = d; }

  std::string verdict;
  Decision answer;
  std::vector<std::string> asked;
  std::map<std::string, Decision> recorded;
};

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

  void make_engine(uint64_t recheck = 2000, EngineOptions o = {}) {
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

  // A training loop that syncs every 40 iterations of 10 launches (the decide check's MLP: each
  // chunk of the harness ends in a sync): its segment between syncs is the loop again. A launch
  // costs 6 us recorded, 10 us eagerly.
  void loop_with_syncs(int segments) {
    for (int seg = 0; seg < segments; ++seg) {
      for (int it = 0; it < 40; ++it) {
        for (int i = 0; i < 10; ++i) {
          const uint64_t recorded = engine_->stats().recorded;
          launch(i, it);
          g_now += engine_->stats().recorded > recorded ? 6'000 : 10'000;
        }
      }
      ASSERT_EQ(engine_->before_op(Op::CtxSynchronize, nullptr, false), CUDA_SUCCESS);
      ASSERT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0) << "segment " << seg;
      engine_->after_op(Op::CtxSynchronize, nullptr, false, CUDA_SUCCESS);
    }
  }

  DriverApi api_;
  FunctionTable table_{&api_};
  std::unique_ptr<GraphEngine> engine_;
  decltype(&cuLaunchKernel) launch_ = nullptr;
  const FunctionInfo* scale_ = nullptr;
  const FunctionInfo* add_ = nullptr;
  float y_engine_[kN], y_eager_[kN];
};

TEST_F(GraphDecisionTest, AMeasurementsEagerArmsEvictNoneOfItsGraphs) {
  // Over the graph bound, measured: the sequence's schedule (4 graphs, the bound 2) is built
  // once, kept through the eager arms (windows of 8), and never built again. Only a new window
  // makes room, and then not with graphs replayed in the sequence's last two occurrences
  // recorded as graphs (an eager arm's occurrences do not count).
  EngineOptions o;
  o.max_graphs = 2;
  make_engine(2000, o);
  for (int n = 1; n <= 4; ++n) step(n, 800'000, 1'000'000);
  const uint64_t built = engine_->stats().graphs_built;
  EXPECT_GT(built, uint64_t(o.max_graphs));  // a step of 20 launches: 2, 4, 8 and 6
  for (int n = 5; n <= 51; ++n) step(n, 800'000, 1'000'000);
  EXPECT_EQ(engine_->stats().decided_graph, 1u);
  EXPECT_EQ(engine_->stats().graphs_built, built);
  EXPECT_EQ(engine_->stats().graphs_evicted, 0u);
}

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

TEST_F(GraphDecisionTest, SequencesThatTakeTurnsInAStepAreMeasuredOneAtATime) {
  // A step of two sequences: 10 launches, a host read (a forward's `.item()`), 10 other
  // launches, a host read. The first pays as graphs (300 against 500 us), the second does not
  // (500 either way). Each starts between two starts of the other, so each sample spans the
  // other's part, which runs the same way meanwhile.
  make_engine();
  auto part = [&](int first, int n, uint64_t graph_ns, uint64_t eager_ns, Op end) {
    const uint64_t replayed = engine_->stats().replayed;
    for (int i = first; i < first + 10; ++i) launch(i, n);
    EXPECT_EQ(engine_->before_op(end, nullptr, false), CUDA_SUCCESS);
    EXPECT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0) << "step " << n;
    engine_->after_op(end, nullptr, false, CUDA_SUCCESS);
    g_now += engine_->stats().replayed > replayed ? graph_ns : eager_ns;
  };
  for (int n = 1; n <= 160; ++n) {
    part(0, n, 300'000, 500'000, Op::StreamSynchronize);
    part(10, n, 500'000, 500'000, Op::StreamSynchronize);
  }
  const EngineStats& s = engine_->stats();
  EXPECT_EQ(s.decided_graph, 1u);
  EXPECT_EQ(s.decided_eager, 1u);
  const std::vector<SequenceStat> seqs = engine_->sequence_stats(8);
  ASSERT_EQ(seqs.size(), 2u);
  int graph = 0, eager = 0;
  for (const SequenceStat& q : seqs) {
    (q.verdict == "graph" ? graph : eager)++;
    EXPECT_NE(q.verdict, "measuring");
  }
  EXPECT_EQ(graph, 1);
  EXPECT_EQ(eager, 1);
  EXPECT_EQ(s.launches, s.replayed + s.eager_total());
}

TEST_F(GraphDecisionTest, ASequenceWaitingForTheMeasuringTurnSaysSo) {
  // The step of two sequences above: while the first measures, the second waits, and its why()
  // says so instead of its policy's "window 1 of 6", which does not move while it waits.
  make_engine();
  auto part = [&](int first, int n) {
    for (int i = first; i < first + 10; ++i) launch(i, n);
    EXPECT_EQ(engine_->before_op(Op::StreamSynchronize, nullptr, false), CUDA_SUCCESS);
    engine_->after_op(Op::StreamSynchronize, nullptr, false, CUDA_SUCCESS);
    g_now += 400'000;
  };
  for (int n = 1; n <= 6; ++n) {
    part(0, n);
    part(10, n);
  }
  std::vector<std::string> whys;
  for (const SequenceStat& q : engine_->sequence_stats(8)) {
    EXPECT_EQ(q.verdict, "measuring");
    whys.push_back(q.why);
  }
  ASSERT_EQ(whys.size(), 2u);
  std::sort(whys.begin(), whys.end());
  EXPECT_EQ(whys[0].rfind("measuring (window ", 0), 0u) << whys[0];
  EXPECT_EQ(whys[1].rfind("waiting to measure: another sequence measures now", 0), 0u) << whys[1];
}

TEST_F(GraphDecisionTest, ASequenceMetOnlyBeforeTheLoopDoesNotKeepItsTurnToMeasure) {
  // Set-up before the training loop: a segment of its own, met three times (found, and its
  // third occurrence begins a measurement), then never again.
  make_engine();
  for (int n = 1; n <= 3; ++n) {
    for (int i = 20; i < 25; ++i) launch(i, n);
    ASSERT_EQ(engine_->before_op(Op::StreamSynchronize, nullptr, false), CUDA_SUCCESS);
    engine_->after_op(Op::StreamSynchronize, nullptr, false, CUDA_SUCCESS);
  }
  // The steps take the turn once the set-up's sequence has not come for a while.
  for (int n = 1; n <= 120; ++n) step(n, 800'000, 1'000'000);
  EXPECT_EQ(engine_->stats().decided_graph, 1u);
  // The set-up's sequence is still measuring, and says that it is not met any more.
  int unmet = 0;
  for (const SequenceStat& q : engine_->sequence_stats(8)) {
    if (q.verdict != "measuring") continue;
    ++unmet;
    EXPECT_NE(q.why.find("; not met in the last "), std::string::npos) << q.why;
  }
  EXPECT_EQ(unmet, 1);
}

TEST_F(GraphDecisionTest, VariantsTakingTurnsDoNotKeepTheTurnFromTheOthers) {
  // Two variants of a step take turns (their last launch differs), each followed as the other
  // at its start: in eager windows the switch to the variant is not made, so every eager
  // occurrence ends in a mismatch and no window completes. Two other sequences, one from step
  // 501 on, must still reach verdicts (found by review: before, the variant kept the turn).
  make_engine();
  auto sync = [&](int n) {
    EXPECT_EQ(engine_->before_op(Op::StreamSynchronize, nullptr, false), CUDA_SUCCESS);
    EXPECT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0) << "step " << n;
    engine_->after_op(Op::StreamSynchronize, nullptr, false, CUDA_SUCCESS);
  };
  for (int n = 1; n <= 2000; ++n) {
    const uint64_t replayed = engine_->stats().replayed;
    for (int i = 0; i < 19; ++i) launch(i, n);
    launch(n % 2 ? 19 : 25, n);
    sync(n);
    for (int i = 40; i < 50; ++i) launch(i, n);
    sync(n);
    if (n > 500) {
      for (int i = 60; i < 70; ++i) launch(i, n);
      sync(n);
    }
    g_now += engine_->stats().replayed > replayed ? 300'000 : 500'000;
  }
  int decided = 0;
  for (const SequenceStat& q : engine_->sequence_stats(8)) {
    decided += q.verdict != "measuring" && q.launches > 0 && q.signature.rfind("s-10-", 0) == 0;
  }
  EXPECT_EQ(decided, 2);  // both ten-launch sequences
  // The variants cost mismatches only while one holds the turn (259 here; 968 when the turn
  // was held for good).
  EXPECT_LT(engine_->stats().mismatches, 400u);
  EXPECT_EQ(engine_->stats().launches, engine_->stats().replayed + engine_->stats().eager_total());
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

TEST_F(GraphDecisionTest, ALoopUnrolledAnewAfterItsVerdictIsNotMeasuredAgain) {
  // A 70-launch loop whose launch 1 takes its scalar from a ring of three (it % 3), the others
  // fixed. Longer than 64 launches, it is unrolled once (70 launches an occurrence), so a graph
  // window of 8 occurrences never holds the 9 iterations in a row that learning its argument
  // period needs (arg_period.h): it learns after the verdict, and at its next turn is unrolled
  // anew to 3 iterations, 210 launches an occurrence. Each occurrence the policy times is then
  // 3 times as long: before, that read as a drift ("graph iterations drifted") and the loop
  // was measured again. The clock moves per launch, as in the test above.
  make_engine();
  int decided_at = -1, learned_at = -1;
  for (int it = 0; it < 3000; ++it) {
    for (int i = 0; i < 70; ++i) {
      const uint64_t recorded = engine_->stats().recorded;
      launch(i, i == 1 ? it % 3 : 1);
      g_now += engine_->stats().recorded > recorded ? 6'000 : 10'000;
    }
    const EngineStats& s = engine_->stats();
    if (decided_at < 0 && s.decided_graph) decided_at = it;
    if (learned_at < 0 && s.loops_unrolled_by_arguments) learned_at = it;
  }
  ASSERT_EQ(engine_->before_op(Op::CtxSynchronize, nullptr, false), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0);
  engine_->after_op(Op::CtxSynchronize, nullptr, false, CUDA_SUCCESS);
  const EngineStats& s = engine_->stats();
  EXPECT_EQ(s.loops_unrolled_by_arguments, 1u);
  ASSERT_GE(decided_at, 0);
  EXPECT_GT(learned_at, decided_at);  // the re-unroll comes after the graph verdict
  EXPECT_EQ(s.decided_graph, 1u);
  EXPECT_EQ(s.measurements, 1u);  // no second measurement
  EXPECT_EQ(s.measure_windows, 6u);
  EXPECT_GT(s.replayed, s.launches * 8 / 10);
}

TEST_F(GraphDecisionTest, ASegmentThatIsTheLoopAgainKeepsTheLoopsDecision) {
  make_engine();
  loop_with_syncs(30);
  const EngineStats& s = engine_->stats();
  // Before: the 400-launch segment, found at its third occurrence, was followed as a sequence
  // of its own and measured from nothing, eager windows of whole segments (8 per window), and
  // had no verdict after 30 segments; the loop's verdict went unused.
  EXPECT_EQ(s.sequences_followed, 1u);
  EXPECT_EQ(s.decided_graph, 1u);
  EXPECT_GT(s.loops_resumed, 20u);
  // Eager: the loop's finding and its measurement's eager windows, nothing else.
  const uint64_t finding = s.eager[static_cast<int>(EagerReason::kNotRepeating)];
  const uint64_t measuring = s.eager[static_cast<int>(EagerReason::kMeasuring)];
  EXPECT_EQ(s.launches, s.replayed + finding + measuring);
  EXPECT_LE(measuring, s.launches / 5);
}

TEST_F(GraphDecisionTest, UnmeasuredTheSegmentIsFollowedAsBefore) {
  engine_ = std::make_unique<GraphEngine>(&api_, EngineOptions{});
  loop_with_syncs(30);
  EXPECT_EQ(engine_->stats().sequences_followed, 2u);  // the loop, then the segment
}

}  // namespace
}  // namespace pygraph

namespace pygraph {
namespace {

TEST_F(GraphDecisionTest, ACachedVerdictIsAdoptedWithoutMeasuring) {
  for (const char* verdict : {"graph", "eager"}) {
    FakeStore store;
    store.verdict = verdict;
    EngineOptions o;
    o.store = &store;
    make_engine(2000, o);
    g_now = 1;
    // Steps 1-2 find the sequence; step 3, its first recorded occurrence, names it.
    for (int n = 1; n <= 3; ++n) step(n, 800'000, 1'000'000);
    ASSERT_EQ(store.asked.size(), 1u) << verdict;
    EXPECT_EQ(store.asked[0].substr(0, 5), "s-20-");
    const bool graph = std::string(verdict) == "graph";
    for (int n = 4; n <= 30; ++n) EXPECT_EQ(step(n, 800'000, 1'000'000), graph) << verdict << n;
    const EngineStats& s = engine_->stats();
    EXPECT_EQ(s.decided_cached, 1u);
    EXPECT_EQ(s.measurements, 0u);
    EXPECT_EQ(s.eager[static_cast<int>(EagerReason::kMeasuring)], 0u) << "no eager window";
    EXPECT_EQ(s.eager[static_cast<int>(EagerReason::kDecidedEager)], graph ? 0u : 27u * 20u);
    EXPECT_TRUE(store.recorded.empty()) << "a cached verdict is not recorded again";
    const std::vector<SequenceStat> seq = engine_->sequence_stats(50);
    ASSERT_EQ(seq.size(), 1u);
    EXPECT_EQ(seq[0].source, "cached");
    EXPECT_EQ(seq[0].verdict, verdict);
    EXPECT_EQ(seq[0].signature, store.asked[0]);
  }
}

TEST_F(GraphDecisionTest, AMissingVerdictIsMeasuredThenRecordedWithItsFigures) {
  FakeStore store;
  EngineOptions o;
  o.store = &store;
  make_engine(2000, o);
  for (int n = 1; n <= 51; ++n) step(n, 800'000, 1'000'000);
  const EngineStats& s = engine_->stats();
  EXPECT_EQ(s.decided_graph, 1u);
  EXPECT_EQ(s.measurements, 1u);
  EXPECT_EQ(s.decided_cached, 0u);
  ASSERT_EQ(store.recorded.size(), 1u);
  const auto& [signature, d] = *store.recorded.begin();
  EXPECT_EQ(signature, store.asked.at(0));
  EXPECT_EQ(d.verdict, "graph");
  EXPECT_DOUBLE_EQ(d.eager_us, 1000.0);
  EXPECT_DOUBLE_EQ(d.graph_us, 800.0);
  EXPECT_EQ(d.windows, 6u);
  EXPECT_EQ(d.launches, 20u);
  EXPECT_NE(d.why.find("20.0 % faster"), std::string::npos) << d.why;
  const std::vector<SequenceStat> seq = engine_->sequence_stats(50);
  ASSERT_EQ(seq.size(), 1u);
  EXPECT_EQ(seq[0].source, "measured");
  EXPECT_NEAR(seq[0].gain_percent, 20.0, 1e-9);
  EXPECT_EQ(seq[0].launches, 49u * 20u);
}

// Kernel patterns decide without measuring, and also when measuring is off.
TEST_F(GraphDecisionTest, ADeniedOrNotAllowedKernelKeepsItsSequenceEager) {
  struct Case {
    std::vector<std::string> allow, deny;
    bool graphed;
  };
  const Case cases[] = {{{"*"}, {"decision_add"}, false},
                        {{"decision_scale"}, {}, false},
                        {{"decision_*"}, {}, true},
                        {{"*"}, {"*_scale", "nothing"}, false},
                        {{"decision_*"}, {"other*"}, true}};
  for (const Case& c : cases) {
    EngineOptions o;
    o.allow_kernels = c.allow;
    o.deny_kernels = c.deny;
    engine_ = std::make_unique<GraphEngine>(&api_, o);
    // Step 3 is the first recorded occurrence: its kernels are known at its end.
    for (int n = 1; n <= 3; ++n) step(n, 1, 1);
    for (int n = 4; n <= 20; ++n) EXPECT_EQ(step(n, 1, 1), c.graphed) << n;
    const EngineStats& s = engine_->stats();
    EXPECT_EQ(s.decided_config, c.graphed ? 0u : 1u);
    EXPECT_EQ(s.eager[static_cast<int>(EagerReason::kDecidedEager)], c.graphed ? 0u : 17u * 20u);
    EXPECT_EQ(s.launches, s.replayed + s.eager_total());
    const std::vector<SequenceStat> seq = engine_->sequence_stats(50);
    ASSERT_EQ(seq.size(), 1u);
    EXPECT_EQ(seq[0].source, c.graphed ? "unmeasured" : "config");
  }
  // Measuring on: a denied sequence is never measured.
  EngineOptions o;
  o.deny_kernels = {"decision_add"};
  make_engine(20, o);
  for (int n = 1; n <= 80; ++n) step(n, 800'000, 1'000'000);
  EXPECT_EQ(engine_->stats().measurements, 0u);
  EXPECT_EQ(engine_->stats().decided_config, 1u);
  EXPECT_EQ(engine_->stats().eager[static_cast<int>(EagerReason::kMeasuring)], 0u);
}

}  // namespace
}  // namespace pygraph
