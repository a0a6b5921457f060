// The engine's thread identity (thread_id.h): stable within a thread, and never shared by two
// threads, even when one starts after the other ended and gets its thread-local block.
#include "graph/thread_id.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <thread>
#include <vector>

namespace pygraph {
namespace {

TEST(ThreadId, StableWithinAThread) {
  EXPECT_EQ(thread_id(), thread_id());
  EXPECT_NE(thread_id(), nullptr);
}

TEST(ThreadId, AThreadStartedAfterAnotherEndedIsAnotherThread) {
  // Each thread ends before the next starts: glibc gives the next one the ended one's stack
  // and thread-local block, so the address of a thread-local is the same in all of them.
  std::vector<const void*> ids;
  std::set<const void*> marks;
  for (int i = 0; i < 8; ++i) {
    std::thread t([&] {
      ids.push_back(thread_id());
      static thread_local char mark;
      marks.insert(&mark);
    });
    t.join();
  }
  EXPECT_EQ(std::set<const void*>(ids.begin(), ids.end()).size(), ids.size());
  EXPECT_EQ(ids.size(), 8u);
  // The shape the identity must survive (informative: another libc may not reuse the block).
  if (marks.size() == 1) SUCCEED() << "thread-local blocks were reused";
  EXPECT_EQ(std::count(ids.begin(), ids.end(), thread_id()), 0);
}

}  // namespace
}  // namespace pygraph
