// Graph mode's own events (own_events.h) on the driver stand-in: one fork event per context,
// created at its first use; spares reused only once no pending node names them, at most 64 per
// context; none without cuEventCreate; a context's end forgets them all.
#include "graph/own_events.h"

#include <gtest/gtest.h>

#include <set>

#include "standin.h"
#include "standin_driver_api.h"

namespace pygraph {
namespace {

decltype(DriverApi::event_create) g_create = nullptr;
int g_created = 0;
int g_failures = 0;  // the next creations that fail

CUresult counting_create(CUevent* e, unsigned int flags) {
  if (g_failures > 0) {
    --g_failures;
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  ++g_created;
  return g_create(e, flags);
}

class OwnEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::fill_standin_driver_api(&api_);
    g_create = api_.event_create;
    g_created = g_failures = 0;
    api_.event_create = &counting_create;
  }
  DriverApi api_;
};

TEST_F(OwnEventsTest, OneForkEventPerContextCreatedAtItsFirstUse) {
  OwnEvents events(&api_);
  EXPECT_EQ(g_created, 0);
  const CUcontext a = standin_context_create(), b = standin_context_create();
  const CUevent fa = events.fork(a);
  ASSERT_NE(fa, nullptr);
  EXPECT_EQ(events.fork(a), fa);
  EXPECT_EQ(g_created, 1);
  const CUevent fb = events.fork(b);
  EXPECT_NE(fb, fa);
  EXPECT_EQ(g_created, 2);

  events.forget();  // a context ended: its events went with it
  const CUevent again = events.fork(a);
  EXPECT_NE(again, nullptr);
  EXPECT_EQ(g_created, 3);
}

TEST_F(OwnEventsTest, ASpareIsReusedOnlyOnceNoPendingNodeNamesIt) {
  OwnEvents events(&api_);
  const CUcontext ctx = standin_context_create();
  auto nothing_named = [](CUevent) { return false; };
  const CUevent s1 = events.spare(ctx, nothing_named);
  ASSERT_NE(s1, nullptr);
  EXPECT_NE(s1, events.fork(ctx));
  EXPECT_EQ(events.spare(ctx, nothing_named), s1);  // free again: reused
  // A pending node still names s1 (a second event destroyed in the same chunk): another one.
  const CUevent s2 = events.spare(ctx, [&](CUevent e) { return e == s1; });
  ASSERT_NE(s2, nullptr);
  EXPECT_NE(s2, s1);
  EXPECT_EQ(events.spare(ctx, [&](CUevent e) { return e == s1; }), s2);
  EXPECT_EQ(events.spare(ctx, nothing_named), s1);  // the first free one
  EXPECT_EQ(g_created, 3);                          // the fork event and two spares
}

TEST_F(OwnEventsTest, AtMostSixtyFourSparesPerContext) {
  OwnEvents events(&api_);
  const CUcontext ctx = standin_context_create();
  auto all_named = [](CUevent) { return true; };
  std::set<CUevent> spares;
  for (size_t i = 0; i < OwnEvents::kMaxSpares; ++i) spares.insert(events.spare(ctx, all_named));
  EXPECT_EQ(spares.size(), OwnEvents::kMaxSpares);
  EXPECT_EQ(spares.count(nullptr), 0u);
  EXPECT_EQ(events.spare(ctx, all_named), nullptr);  // the chunk is flushed instead
  EXPECT_NE(events.spare(standin_context_create(), all_named), nullptr);  // per context
}

TEST_F(OwnEventsTest, NoEventsWithoutCuEventCreate) {
  DriverApi none = api_;
  none.event_create = nullptr;
  OwnEvents events(&none);
  EXPECT_EQ(events.fork(nullptr), nullptr);
  EXPECT_EQ(events.spare(nullptr, [](CUevent) { return false; }), nullptr);
}

TEST_F(OwnEventsTest, AFailedCreationIsTriedAgainAtTheNextUse) {
  OwnEvents events(&api_);
  g_failures = 1;
  EXPECT_EQ(events.fork(nullptr), nullptr);
  EXPECT_NE(events.fork(nullptr), nullptr);
  EXPECT_EQ(g_created, 1);
  g_failures = 1;  // a spare that cannot be created: none (the engine flushes the chunk)
  EXPECT_EQ(events.spare(nullptr, [](CUevent) { return false; }), nullptr);
  EXPECT_NE(events.spare(nullptr, [](CUevent) { return false; }), nullptr);
}

}  // namespace
}  // namespace pygraph
