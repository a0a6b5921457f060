// Graph mode on the benchmark suite's shape (the engine on the driver stand-in): W warm-up
// iterations without a sync, then chunks of "sync; S iterations; sync", each iteration the same
// launch sequence of P launches whose blocks repeat inside it the way a network's layers do.
// Steady-state coverage (warm-up excluded) is what the suite reports; results are compared bit
// for bit with the same launches made eagerly at every sync.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph_engine.h"
#include "standin.h"
#include "standin_driver_api.h"
#include "test_kernels.h"

namespace pygraph {
namespace {

constexpr int kN = test::kOrderFloats;
constexpr int kKernels = 40;
constexpr int kMemset = -1;  // an async memset in the launch program

// Launch programs shaped like the suite's workloads (kernel ids; kMemset for a memset). Shared
// kernels (normalization, activations, adds) recur in every block; convolutions differ by stage.
enum Kernel {
  kBn = 0,
  kRelu,
  kAdd,
  kSilu,
  kMean,
  kSigmoid,
  kMul,
  kPool,
  kLinear,
  kSoftmax,
  kGelu,
  kLayerNorm,
  kGemm,
  kDropout,
  kAdam,
  kConv = 16
};

std::vector<int> resnet(const std::vector<int>& blocks) {  // ResNet-50-like bottlenecks
  std::vector<int> p = {kConv, kBn, kRelu, kPool};
  for (size_t s = 0; s < blocks.size(); ++s) {
    const int c = kConv + 1 + 3 * int(s);
    for (int b = 0; b < blocks[s]; ++b) {
      if (b == 0) p.insert(p.end(), {c + 2, kBn});  // downsample
      p.insert(p.end(), {c, kBn, kRelu, c + 1, kBn, kRelu, c + 2, kBn, kAdd, kRelu});
    }
  }
  p.insert(p.end(), {kPool, kLinear});
  return p;
}

std::vector<int> efficientnet() {  // MBConv blocks with squeeze-excitation, per stage
  const int stages[7] = {1, 2, 2, 3, 3, 4, 1};
  const int dw[7] = {0, 0, 1, 0, 1, 1, 0};  // 3x3 or 5x5 depthwise
  std::vector<int> p = {kConv, kBn, kSilu};
  for (int s = 0; s < 7; ++s) {
    for (int b = 0; b < stages[s]; ++b) {
      if (s > 0) p.insert(p.end(), {kConv + 1, kBn, kSilu});                    // expand
      p.insert(p.end(), {kConv + 2 + dw[s], kBn, kSilu});                       // depthwise
      p.insert(p.end(), {kMean, kConv + 4, kSilu, kConv + 4, kSigmoid, kMul});  // SE
      p.insert(p.end(), {kConv + 1, kBn});                                      // project
      if (b > 0) p.push_back(kAdd);
    }
  }
  p.insert(p.end(), {kConv + 1, kBn, kSilu, kMean, kLinear});
  return p;
}

std::vector<int> bert(int layers, bool memsets) {  // identical encoder layers
  std::vector<int> p = {kConv, kConv, kAdd, kLayerNorm};
  for (int l = 0; l < layers; ++l) {
    if (memsets) p.insert(p.end(), {kMemset, kMemset, kMemset, kMemset, kMemset});
    p.insert(p.end(), {kGemm,    kAdd,      kGemm, kAdd, kGemm, kAdd,       kConv + 5,
                       kSoftmax, kConv + 6, kGemm, kAdd, kAdd,  kLayerNorm, kGemm,
                       kAdd,     kGelu,     kGemm, kAdd, kAdd,  kLayerNorm});
  }
  p.insert(p.end(), {kGemm, kAdd, kConv + 7});
  return p;
}

std::vector<int> train(int layers) {  // forward, backward (other kernels), optimizer
  std::vector<int> fwd = bert(layers, false), p = fwd;
  for (size_t i = fwd.size(); i-- > 0;) {
    const int k = fwd[i];
    p.push_back(k == kGemm ? kConv + 8 : k + 20 < kKernels ? k + 20 : k);
    if (k == kGemm) p.push_back(kConv + 9);
  }
  for (int g = 0; g < 100; ++g) p.insert(p.end(), {kAdam, kMul});
  return p;
}

// Padded with head-like launches (or cut) to exactly `p` launches, the suite's figures.
std::vector<int> fit(std::vector<int> program, size_t p) {
  const int head[] = {kPool, kLinear, kConv + 10, kSoftmax, kConv + 11, kAdd};
  for (size_t i = 0; program.size() < p; ++i) program.push_back(head[i % 6]);
  program.resize(p);
  return program;
}

std::vector<int> mlp(int layers) {
  std::vector<int> p;
  for (int l = 0; l < layers; ++l) p.insert(p.end(), {kGemm, kRelu});
  for (int l = 0; l < layers; ++l) p.insert(p.end(), {kConv + 8, kConv + 9, kConv + 10});
  for (int l = 0; l < 2 * layers; ++l) p.push_back(kAdam);
  return p;
}

struct Figures {
  uint64_t launches = 0, replayed = 0, replays = 0, not_repeating = 0, mismatch = 0, mismatches = 0,
           graphs = 0, memops = 0, memops_replayed = 0;
  std::vector<uint64_t> chunk_replayed;  // launches replayed per chunk
  double coverage() const { return 100.0 * double(replayed) / double(launches ? launches : 1); }
  double per_replay() const { return replays ? double(replayed + memops_replayed) / replays : 0; }
};

class GraphSyncChunksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::fill_standin_driver_api(&api_);
    test::take(&launch_, "cuLaunchKernel");
    test::take(&memset_, "cuMemsetD8Async");
    const size_t sizes[2] = {4, 8};
    standin_kernel_fn fns[4] = {&test::order_k0, &test::order_k1, &test::order_k2, &test::order_k3};
    for (int k = 0; k < kKernels; ++k) {
      const std::string name = "net_k" + std::to_string(k);
      kernels_[k] = test::standin_kernel(&table_, name.c_str(), fns[k % 4], 2, sizes);
    }
    decltype(&cuMemAlloc_v2) alloc;
    test::take(&alloc, "cuMemAlloc_v2");
    CUdeviceptr d[2];
    for (CUdeviceptr& p : d) ASSERT_EQ(alloc(&p, kN * sizeof(float)), CUDA_SUCCESS);
    y_engine_ = reinterpret_cast<float*>(d[0]);
    y_eager_ = reinterpret_cast<float*>(d[1]);
  }

  // One launch (or memset) through the engine and directly.
  void both(int k, float a) {
    if (k == kMemset) {
      const unsigned char v = static_cast<unsigned char>(iteration_ & 3);
      MemopCall m{};
      m.op = Op::MemsetD8Async;
      m.dst = reinterpret_cast<CUdeviceptr>(y_engine_ + kN - 1);
      m.value = v;
      m.count = 1;
      m.eager = reinterpret_cast<void*>(memset_);
      ASSERT_EQ(engine_->memop(m), CUDA_SUCCESS);
      ASSERT_EQ(memset_(reinterpret_cast<CUdeviceptr>(y_eager_ + kN - 1), v, 1, nullptr),
                CUDA_SUCCESS);
      return;
    }
    CUdeviceptr ye = reinterpret_cast<CUdeviceptr>(y_engine_);
    CUdeviceptr yr = reinterpret_cast<CUdeviceptr>(y_eager_);
    void* pe[] = {&a, &ye};
    void* pr[] = {&a, &yr};
    const EngineLaunch l = test::engine_launch(Op::LaunchKernel, reinterpret_cast<void*>(launch_),
                                               kernels_[k], 1, 32, nullptr, pe);
    ASSERT_EQ(engine_->launch(l), CUDA_SUCCESS);
    ASSERT_EQ(launch_(l.function, 1, 1, 1, 32, 1, 1, 0, nullptr, pr, nullptr), CUDA_SUCCESS);
  }

  // Whole iterations; some kernels' arguments change every iteration (their nodes are patched).
  void iterations(const std::vector<int>& program, int n) {
    for (int r = 0; r < n; ++r) {
      for (const int k : program) both(k, k % 3 == 1 ? 0.001f * float(iteration_ % 5) : 0.75f);
      ++iteration_;
    }
  }

  // torch.cuda.synchronize(): everything deferred goes out; the results must be equal.
  void sync() {
    ASSERT_EQ(engine_->before_op(Op::CtxSynchronize, nullptr, false), CUDA_SUCCESS);
    ASSERT_EQ(std::memcmp(y_engine_, y_eager_, kN * sizeof(float)), 0);
    engine_->after_op(Op::CtxSynchronize, nullptr, false, CUDA_SUCCESS);
    const EngineStats& s = engine_->stats();
    ASSERT_EQ(s.launches, s.replayed + s.eager_total());
  }

  // The suite's worker (tests/gpu/harness.py): `warmup` iterations, a sync, then `chunks` of
  // "sync; S iterations; sync", then `suffix` launches before each chunk's last sync. Prints
  // and returns the steady-state figures (the end minus after the warm-up, as the suite does).
  Figures run(const char* what, const std::vector<int>& program, int warmup, int s, int chunks = 8,
              const std::vector<int>& suffix = {}) {
    engine_ = std::make_unique<GraphEngine>(&api_);
    for (int i = 0; i < kN; ++i) y_engine_[i] = y_eager_[i] = float(i) * 0.125f;
    iterations(program, warmup);
    sync();
    const EngineStats warm = engine_->stats();
    Figures f;
    for (int c = 0; c < chunks; ++c) {
      const uint64_t before = engine_->stats().replayed;
      sync();
      iterations(program, s);
      for (const int k : suffix) both(k, 0.5f);
      sync();
      f.chunk_replayed.push_back(engine_->stats().replayed - before);
    }
    const EngineStats& e = engine_->stats();
    f.launches = e.launches - warm.launches;
    f.replayed = e.replayed - warm.replayed;
    f.replays = e.replays - warm.replays;
    const int nr = static_cast<int>(EagerReason::kNotRepeating);
    const int mm = static_cast<int>(EagerReason::kMismatch);
    f.not_repeating = e.eager[nr] - warm.eager[nr];
    f.mismatch = e.eager[mm] - warm.eager[mm];
    f.mismatches = e.mismatches - warm.mismatches;
    f.graphs = e.graphs_built - warm.graphs_built;
    f.memops = e.memops - warm.memops;
    f.memops_replayed = e.memops_replayed - warm.memops_replayed;
    std::printf(
        "%-12s P=%4zu S=%d W=%2d: coverage %5.1f %%, %5.1f per replay, eager not_repeating"
        " %5llu mismatch %4llu, graphs built %3llu\n",
        what, program.size(), s, warmup, f.coverage(), f.per_replay(),
        static_cast<unsigned long long>(f.not_repeating),
        static_cast<unsigned long long>(f.mismatch), static_cast<unsigned long long>(f.graphs));
    return f;
  }

  DriverApi api_;
  FunctionTable table_{&api_};
  std::unique_ptr<GraphEngine> engine_;
  decltype(&cuLaunchKernel) launch_ = nullptr;
  decltype(&cuMemsetD8Async) memset_ = nullptr;
  const FunctionInfo* kernels_[kKernels] = {};
  float *y_engine_ = nullptr, *y_eager_ = nullptr;  // device memory
  int iteration_ = 0;
};

struct Shape {
  const char* what;
  std::vector<int> program;
  int warmup;  // the suite's
};

std::vector<Shape> shapes() {
  return {
      {"mlp", fit(mlp(7), 60), 10},
      {"resnet50", fit(resnet({3, 4, 6, 3}), 218), 10},
      {"efficientnet", fit(efficientnet(), 270), 10},
      {"bert", fit(bert(12, false), 273), 10},
      {"bert+memsets", bert(12, true), 10},  // 60 memsets in 307 launches and memsets
      {"train", fit(train(20), 1135), 6},
  };
}

TEST_F(GraphSyncChunksTest, TheLoopFoundInTheWarmUpGoesOnInEveryChunk) {
  // Without syncs, the warm-up finds the loop (the iteration) and replays it; each chunk's sync
  // cuts it at an iteration's end, and the first launch of the next chunk goes on with it. Before
  // that, each chunk was a run of its own: its first two iterations eager while the detector
  // found the loop again, and a chunk followed whole only from its third occurrence (the suite's
  // 8 chunks: 76-93 % coverage; a chunk longer than 4096 launches never).
  for (const Shape& sh : shapes()) {
    for (const int s : {1, 2, 3, 5}) {
      const Figures f = run(sh.what, sh.program, sh.warmup, s);
      EXPECT_GE(f.coverage(), 99.5) << sh.what << " S=" << s;
      EXPECT_EQ(f.not_repeating, 0u) << sh.what << " S=" << s;
      EXPECT_EQ(f.mismatches, 0u) << sh.what << " S=" << s;
      EXPECT_EQ(f.memops_replayed, f.memops) << sh.what << " S=" << s;
    }
  }
}

TEST_F(GraphSyncChunksTest, ALoopFoundInsideAChunkGoesOnInTheNextOne) {
  // No warm-up: the first chunk finds the loop (S=2: at its very last launch; S=3: it follows
  // the third iteration) and every later chunk replays whole from its first launch.
  for (const Shape& sh : shapes()) {
    for (const int s : {2, 3}) {
      const Figures f = run(sh.what, sh.program, 0, s);
      const size_t launches =
          sh.program.size() - std::count(sh.program.begin(), sh.program.end(), int(kMemset));
      for (size_t c = 1; c < f.chunk_replayed.size(); ++c) {
        EXPECT_GE(f.chunk_replayed[c] * 1000, launches * s * 995)
            << sh.what << " S=" << s << " chunk " << c;
      }
    }
  }
}

TEST_F(GraphSyncChunksTest, AChunkSeenTwiceIsFollowedWholeRatherThanTheLoop) {
  // Each chunk ends with launches the loop does not have (a reduction before the host reads):
  // in the first two chunks the loop goes on for the iterations (in the second, resumed where
  // the suffix ended it) and the suffix runs eagerly; from the third, the chunk is a sequence
  // seen twice, followed whole, suffix included.
  const std::vector<int> program = fit(resnet({3, 4, 6, 3}), 218);
  const Figures f = run("resnet50+sfx", program, 10, 3, 8, {kMean, kSoftmax});
  for (size_t c = 0; c < f.chunk_replayed.size(); ++c) {
    EXPECT_EQ(f.chunk_replayed[c], program.size() * 3 + (c < 2 ? 0 : 2)) << "chunk " << c;
  }
}

}  // namespace
}  // namespace pygraph
