// Signatures: the same sequence has the same one in every run, whatever the process-local ids
// and handles; another sequence has another.
#include "decisions/signature.h"

#include <gtest/gtest.h>

namespace pygraph {
namespace {

std::string mlp_step(const char* gemm, uint32_t block_x, bool periodic, uint32_t side_stream) {
  SignatureBuilder b;
  const uint32_t block[3] = {block_x, 1, 1};
  b.add_launch(gemm, block, 1, 0, 0);
  b.add_launch("relu_kernel", block, 1, 0, side_stream);
  b.add_memop(40, 1, 0, 0);
  return b.finish(periodic);
}

TEST(Signature, SameSequenceSameSignature) {
  EXPECT_EQ(mlp_step("gemm_128x64", 256, false, 0), mlp_step("gemm_128x64", 256, false, 0));
  EXPECT_EQ(mlp_step("gemm_128x64", 256, false, 0).substr(0, 4), "s-3-");
}

TEST(Signature, AnyDifferenceInShapeMakesAnother) {
  const std::string base = mlp_step("gemm_128x64", 256, false, 0);
  EXPECT_NE(base, mlp_step("gemm_64x64", 256, false, 0));   // another kernel
  EXPECT_NE(base, mlp_step("gemm_128x64", 128, false, 0));  // another block
  EXPECT_NE(base, mlp_step("gemm_128x64", 256, true, 0));   // a loop, not a segment
  EXPECT_NE(base, mlp_step("gemm_128x64", 256, false, 1));  // on a side stream
  SignatureBuilder swapped;                                 // the same nodes in another order
  const uint32_t block[3] = {256, 1, 1};
  swapped.add_launch("relu_kernel", block, 1, 0, 0);
  swapped.add_launch("gemm_128x64", block, 1, 0, 0);
  swapped.add_memop(40, 1, 0, 0);
  EXPECT_NE(base, swapped.finish(false));
}

TEST(Signature, KnownValueStaysTheSameAcrossBuilds) {
  // Written into cache files read by later runs: the hash must never change by accident.
  SignatureBuilder b;
  const uint32_t block[3] = {128, 1, 1};
  b.add_launch("k", block, 1, 0, 0);
  EXPECT_EQ(b.finish(false), "s-1-13bf3a47467bed3c");
}

}  // namespace
}  // namespace pygraph
