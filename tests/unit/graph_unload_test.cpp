// Module and library unloads in graph mode, on the driver stand-in (whose unloads are real: a
// launch of an unloaded module's function fails, and its handle goes to the next module's
// function): only the graphs that may launch the unloaded kernels go, the rest keeps replaying,
// deferred work goes out while the module is still loaded, and a handle reused by a new module
// is described again and never replayed with an old graph. Results are compared bit for bit with
// the same launches made eagerly.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "driver/module_unload.h"
#include "graph/graph_engine.h"
#include "standin.h"
#include "standin_driver_api.h"
#include "test_kernels.h"

namespace pygraph {
namespace {

constexpr int kN = test::kKernelFloats;

using test::add_kernel;
using test::scale_kernel;
// Another layout: (long long, float*, int): y[i] -= k * (i % m).
void mix(const unsigned*, const unsigned*, void** p) {
  const long long k = *static_cast<long long*>(p[0]);
  auto* y = reinterpret_cast<float*>(*static_cast<CUdeviceptr*>(p[1]));
  const int m = *static_cast<int*>(p[2]);
  for (int i = 0; i < kN; ++i) y[i] -= float(k * (i % m));
}

using test::take;

class GraphUnloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::fill_standin_driver_api(&api_);
    take(&launch_, "cuLaunchKernel");
    take(&module_load_, "cuModuleLoadData");
    take(&module_get_function_, "cuModuleGetFunction");
    take(&module_unload_, "cuModuleUnload");
    take(&library_load_, "cuLibraryLoadData");
    take(&library_get_kernel_, "cuLibraryGetKernel");
    take(&library_unload_, "cuLibraryUnload");
    take(&kernel_get_function_, "cuKernelGetFunction");
    const size_t two[2] = {4, 8}, three[3] = {8, 8, 4};
    standin_register_kernel("unload_scale", &scale_kernel, 2, two);
    standin_register_kernel("unload_add", &add_kernel, 2, two);
    standin_register_kernel("unload_mix", &mix, 3, three);
    for (int i = 0; i < kN; ++i) y_engine_[i] = y_eager_[i] = float(i) * 0.25f;
  }

  CUmodule load_module() {
    CUmodule m = nullptr;
    EXPECT_EQ(module_load_(&m, "image"), CUDA_SUCCESS);
    return m;
  }
  CUlibrary load_library() {
    CUlibrary l = nullptr;
    EXPECT_EQ(library_load_(&l, "image", nullptr, nullptr, 0, nullptr, nullptr, 0), CUDA_SUCCESS);
    return l;
  }
  // The handle's info, as the hooks look it up at a launch.
  const FunctionInfo* info(uint64_t handle) {
    bool created;
    return table_.lookup(handle, &created);
  }
  const FunctionInfo* function(CUmodule m, const char* name) {
    CUfunction f = nullptr;
    EXPECT_EQ(module_get_function_(&f, m, name), CUDA_SUCCESS) << name;
    return info(reinterpret_cast<uint64_t>(f));
  }
  const FunctionInfo* kernel(CUlibrary l, const char* name) {
    CUkernel k = nullptr;
    EXPECT_EQ(library_get_kernel_(&k, l, name), CUDA_SUCCESS) << name;
    return info(reinterpret_cast<uint64_t>(k));
  }

  // One launch of `f` with these argument pointers for each arm (the second is y's), through the
  // engine and directly. A block size per position in a step makes every launch of a step a
  // token of its own: no loop is found inside a step.
  void both(const FunctionInfo* f, std::vector<void*> args, unsigned block) {
    CUdeviceptr ye = reinterpret_cast<CUdeviceptr>(y_engine_);
    CUdeviceptr yr = reinterpret_cast<CUdeviceptr>(y_eager_);
    std::vector<void*> pe = args, pr = args;
    pe[1] = &ye;
    pr[1] = &yr;
    const EngineLaunch l = test::engine_launch(Op::LaunchKernel, reinterpret_cast<void*>(launch_),
                                               f, 1, block, nullptr, pe.data());
    ASSERT_EQ(engine_.launch(l), CUDA_SUCCESS);
    ASSERT_EQ(launch_(l.function, 1, 1, 1, block, 1, 1, 0, nullptr, pr.data(), nullptr),
              CUDA_SUCCESS);
  }
  // Launch i of a step of `scale_f` and `add_f` (mix_f, if given, takes add_f's place).
  void step_launch(int n, int i, const FunctionInfo* scale_f, const FunctionInfo* add_f,
                   const FunctionInfo* mix_f = nullptr) {
    float a = 0.5f;
    long long k = n;
    int m = 3;
    const unsigned block = 32 + i;
    if (i % 2 == 0) {
      both(scale_f, {&a, nullptr}, block);
    } else if (mix_f) {
      both(mix_f, {&k, nullptr, &m}, block);
    } else {
      both(add_f, {&n, nullptr}, block);
    }
  }
  // A step: 10 launches, then the host reads the result.
  void step(int n, const FunctionInfo* scale_f, const FunctionInfo* add_f,
            const FunctionInfo* mix_f = nullptr) {
    for (int i = 0; i < 10; ++i) step_launch(n, i, scale_f, add_f, mix_f);
    host_read(("after step " + std::to_string(n)).c_str());
  }
  void host_read(const char* when) {
    ASSERT_EQ(engine_.before_op(Op::StreamSynchronize, nullptr, false), CUDA_SUCCESS);
    ASSERT_EQ(std::memcmp(y_engine_, y_eager_, sizeof y_engine_), 0) << when;
    engine_.after_op(Op::StreamSynchronize, nullptr, false, CUDA_SUCCESS);
  }

  // An unload as the hooks make it: the table forgets before and after, the engine submits and
  // forgets graphs before, and sees the boundary after.
  template <class Handle, class Unload>
  void unload(Op op, Handle h, Unload real) {
    const uint64_t handle = reinterpret_cast<uint64_t>(h);
    const ModuleUnload u = describe_unload(api_, op, handle);
    table_.forget(u);
    ASSERT_EQ(engine_.before_op(op, nullptr, false, handle), CUDA_SUCCESS);
    ASSERT_EQ(real(h), CUDA_SUCCESS);
    engine_.after_op(op, nullptr, false, CUDA_SUCCESS);
    table_.forget(u);
  }

  void expect_all_accounted() {
    ASSERT_TRUE(engine_.idle());
    const EngineStats& s = engine_.stats();
    EXPECT_EQ(s.launches, s.replayed + s.eager_total());
    EXPECT_EQ(s.eager[static_cast<int>(EagerReason::kLaunchError)], 0u);
    EXPECT_EQ(s.graph_failures, 0u);
  }

  static EngineOptions chunks_from_8() {
    EngineOptions o;
    o.first_chunk = 8;  // a 10-launch step is two graphs: 8 + 2 launches
    return o;
  }

  DriverApi api_;
  FunctionTable table_{&api_};
  GraphEngine engine_{&api_, chunks_from_8()};
  decltype(&cuLaunchKernel) launch_ = nullptr;
  decltype(&cuModuleLoadData) module_load_ = nullptr;
  decltype(&cuModuleGetFunction) module_get_function_ = nullptr;
  decltype(&cuModuleUnload) module_unload_ = nullptr;
  decltype(&cuLibraryLoadData) library_load_ = nullptr;
  decltype(&cuLibraryGetKernel) library_get_kernel_ = nullptr;
  decltype(&cuLibraryUnload) library_unload_ = nullptr;
  decltype(&cuKernelGetFunction) kernel_get_function_ = nullptr;
  float y_engine_[kN], y_eager_[kN];
};

TEST_F(GraphUnloadTest, OnlyTheUnloadedModulesGraphsGoAndTheOtherLoopKeepsReplaying) {
  const CUmodule ma = load_module(), mb = load_module();
  const FunctionInfo *scale_a = function(ma, "unload_scale"), *add_a = function(ma, "unload_add");
  const FunctionInfo *scale_b = function(mb, "unload_scale"), *add_b = function(mb, "unload_add");
  ASSERT_NE(scale_a, scale_b);
  for (int n = 1; n <= 5; ++n) {
    step(n, scale_a, add_a);
    step(n, scale_b, add_b);
  }
  const EngineStats& s = engine_.stats();
  ASSERT_EQ(s.graphs_live, 4u);  // two per step
  ASSERT_EQ(s.replayed, 2u * 3u * 10u);
  const long long execs = standin_graph_execs_live();

  // Module A goes in the middle of a step of its own: the 3 launches recorded so far go out
  // first, while A is loaded (as a fresh graph of launches [0, 3): built after the unload, it
  // would fail and the eager fallback's launches too).
  for (int i = 0; i < 3; ++i) step_launch(6, i, scale_a, add_a);
  ASSERT_FALSE(engine_.idle());
  unload(Op::ModuleUnload, ma, module_unload_);
  host_read("after the unload");
  EXPECT_EQ(s.graphs_built, 5u);
  EXPECT_EQ(s.graphs_unloaded, 3u);  // A's step: [0, 8), [8, 10) and [0, 3)
  EXPECT_EQ(s.graphs_live, 2u);
  EXPECT_EQ(standin_graph_execs_live(), execs + 1 - 3);  // destroyed in the driver too

  // B's loop goes on replaying its graphs: nothing rebuilt, nothing eager.
  const uint64_t replayed = s.replayed, eager = s.eager_total();
  for (int n = 6; n <= 9; ++n) step(n, scale_b, add_b);
  EXPECT_EQ(s.replayed - replayed, 4u * 10u);
  EXPECT_EQ(s.eager_total(), eager);
  EXPECT_EQ(s.graphs_built, 5u);
  EXPECT_EQ(s.mismatches, 0u);
  expect_all_accounted();
}

TEST_F(GraphUnloadTest, AHandleANewModuleReusesIsDescribedAgainAndGetsGraphsOfItsOwn) {
  const CUmodule ma = load_module(), mb = load_module();
  const FunctionInfo* old_add = function(ma, "unload_add");
  const FunctionInfo* scale_b = function(mb, "unload_scale");
  for (int n = 1; n <= 4; ++n) step(n, scale_b, old_add);
  ASSERT_EQ(engine_.stats().graphs_live, 2u);
  const uint64_t handle = old_add->handle;
  const uint32_t old_id = old_add->id;
  unload(Op::ModuleUnload, ma, module_unload_);
  EXPECT_EQ(engine_.stats().graphs_unloaded, 2u);

  // The next module's function gets the old handle (as a driver may hand it out), for a kernel
  // with another layout.
  const CUmodule mc = load_module();
  const FunctionInfo* new_mix = function(mc, "unload_mix");
  ASSERT_EQ(new_mix->handle, handle) << "the stand-in should hand the handle out again";
  EXPECT_NE(new_mix, old_add);
  EXPECT_GT(new_mix->id, old_id);
  EXPECT_EQ(new_mix->name, "unload_mix");
  EXPECT_EQ(new_mix->params.size(), 3u);
  EXPECT_EQ(new_mix->arg_bytes, 20u);
  // The old info, which the old sequence's tokens name, is still what it was.
  EXPECT_EQ(old_add->name, "unload_add");

  // The same step shape with the new kernel where the old was: a new sequence, new graphs.
  for (int n = 5; n <= 10; ++n) step(n, scale_b, nullptr, new_mix);
  const EngineStats& s = engine_.stats();
  EXPECT_EQ(s.graphs_built, 4u);
  EXPECT_EQ(s.replayed, 2u * 10u + 4u * 10u);
  EXPECT_EQ(s.mismatches, 0u);
  expect_all_accounted();
}

TEST_F(GraphUnloadTest, ALibraryUnloadTakesItsKernelsAndTheFunctionsTakenFromThem) {
  const CUlibrary lib = load_library();
  const CUmodule mb = load_module();
  // The runtime's way: a CUkernel in the CUfunction slot; and a CUfunction of the library's
  // kernel in this context (cuKernelGetFunction).
  const FunctionInfo* scale_k = kernel(lib, "unload_scale");
  CUfunction add_f = nullptr;
  CUkernel add_k = nullptr;
  ASSERT_EQ(library_get_kernel_(&add_k, lib, "unload_add"), CUDA_SUCCESS);
  ASSERT_EQ(kernel_get_function_(&add_f, add_k), CUDA_SUCCESS);
  const FunctionInfo* add_lf = info(reinterpret_cast<uint64_t>(add_f));
  const FunctionInfo* add_ki = info(reinterpret_cast<uint64_t>(add_k));  // launched elsewhere
  ASSERT_TRUE(scale_k->is_kernel_handle);
  ASSERT_FALSE(add_lf->is_kernel_handle);
  const FunctionInfo *scale_b = function(mb, "unload_scale"), *add_b = function(mb, "unload_add");
  for (int n = 1; n <= 4; ++n) {
    step(n, scale_k, add_b);   // holds a kernel of the library
    step(n, scale_b, add_lf);  // holds a function of its module
    step(n, scale_b, add_b);   // holds neither
  }
  ASSERT_EQ(engine_.stats().graphs_live, 6u);
  unload(Op::LibraryUnload, lib, library_unload_);
  const EngineStats& s = engine_.stats();
  EXPECT_EQ(s.graphs_unloaded, 4u);
  EXPECT_EQ(s.graphs_live, 2u);
  const uint64_t replayed = s.replayed;
  for (int n = 5; n <= 7; ++n) step(n, scale_b, add_b);
  EXPECT_EQ(s.replayed - replayed, 3u * 10u);
  // The kernel's handle, reused by the next library for another kernel, is described again.
  const CUlibrary lib2 = load_library();
  const FunctionInfo* mix_k = kernel(lib2, "unload_mix");
  ASSERT_EQ(mix_k->handle, add_ki->handle)
      << "the stand-in should hand the last unloaded kernel's handle out again";
  EXPECT_NE(mix_k, add_ki);
  EXPECT_GT(mix_k->id, add_ki->id);
  EXPECT_TRUE(mix_k->is_kernel_handle);
  EXPECT_EQ(mix_k->params.size(), 3u);
  // Steps with it where B's step had its add: B's step is followed until they part (a mismatch
  // in each of the first steps, before the new step is found), then the new step replays.
  const uint64_t before_mix = s.replayed;
  for (int n = 8; n <= 13; ++n) step(n, scale_b, nullptr, mix_k);
  EXPECT_EQ(s.replayed - before_mix, 4u * 10u);
  EXPECT_EQ(s.graphs_built, 6u + 2u);
  expect_all_accounted();
}

TEST_F(GraphUnloadTest, AContextEndDestroysEveryGraphAndTheLoopsBuildNewOnes) {
  // cuCtxDestroy, a primary-context reset or a primary-context release (which may be the last)
  // frees the context's graph execs in the driver: the engine submits what it deferred first,
  // destroys every graph (any may be that context's), and the sequences go on with graphs built
  // anew, results unchanged.
  const CUmodule ma = load_module(), mb = load_module();
  const FunctionInfo *scale_a = function(ma, "unload_scale"), *add_a = function(ma, "unload_add");
  const FunctionInfo *scale_b = function(mb, "unload_scale"), *add_b = function(mb, "unload_add");
  for (int n = 1; n <= 5; ++n) {
    step(n, scale_a, add_a);
    step(n, scale_b, add_b);
  }
  const EngineStats& s = engine_.stats();
  ASSERT_EQ(s.graphs_live, 4u);
  const long long execs = standin_graph_execs_live();
  for (const Op op : {Op::CtxDestroy, Op::DevicePrimaryCtxReset, Op::DevicePrimaryCtxRelease}) {
    for (int i = 0; i < 3; ++i) step_launch(6, i, scale_a, add_a);  // deferred, then submitted
    ASSERT_FALSE(engine_.idle());
    const uint64_t ended = s.graphs_context_ended;
    ASSERT_EQ(engine_.before_op(op, nullptr, false, 0), CUDA_SUCCESS);
    EXPECT_TRUE(engine_.idle());
    engine_.after_op(op, nullptr, false, CUDA_SUCCESS);
    host_read("after the context ended");
    EXPECT_EQ(s.graphs_live, 0u);
    EXPECT_GE(s.graphs_context_ended - ended, 4u);
    EXPECT_LE(standin_graph_execs_live(), execs) << "destroyed in the driver too";
    // Both loops go on: their graphs are built again and replayed.
    const uint64_t built = s.graphs_built, replayed = s.replayed;
    for (int n = 7; n <= 10; ++n) {
      step(n, scale_a, add_a);
      step(n, scale_b, add_b);
    }
    EXPECT_GE(s.graphs_built - built, 4u);  // two per step at least
    EXPECT_EQ(s.graphs_live, s.graphs_built - built);
    EXPECT_GE(s.replayed - replayed, 2u * 3u * 10u);
  }
  EXPECT_EQ(s.mismatches, 0u);
  expect_all_accounted();
}

}  // namespace
}  // namespace pygraph
