// What graph mode does with each cuLaunchKernelEx attribute (launch_attributes.h), on its own.
#include "driver/launch_attributes.h"

#include <gtest/gtest.h>

#include <vector>

namespace pygraph {
namespace {

CUlaunchAttribute serialization(bool allowed) {
  CUlaunchAttribute a{};
  a.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  a.value.programmaticStreamSerializationAllowed = allowed ? 1 : 0;
  return a;
}

CUlaunchAttribute priority(int value) {
  CUlaunchAttribute a{};
  a.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
  a.value.priority = value;
  return a;
}

bool allows(const std::vector<CUlaunchAttribute>& attrs) {
  return allows_programmatic(attrs.data(), uint32_t(attrs.size()));
}

TEST(LaunchAttributes, EachAttributeHasItsUse) {
  EXPECT_EQ(attr_use(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION), AttrUse::kDrop);
  EXPECT_EQ(attr_use(CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT), AttrUse::kDrop);
  EXPECT_EQ(attr_use(CU_LAUNCH_ATTRIBUTE_PRIORITY), AttrUse::kNode);
  EXPECT_EQ(attr_use(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION), AttrUse::kNode);
  // An event the launch records, or an id this build does not know: never guessed.
  EXPECT_EQ(attr_use(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT), AttrUse::kEager);
  EXPECT_EQ(attr_use(CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT), AttrUse::kEager);
  EXPECT_EQ(attr_use(static_cast<CUlaunchAttributeID>(9999)), AttrUse::kEager);
}

TEST(LaunchAttributes, ProgrammaticOnlyWhereAnAttributeAllowsIt) {
  EXPECT_FALSE(allows({}));
  EXPECT_FALSE(allows({priority(1)}));
  EXPECT_FALSE(allows({serialization(false)}));
  EXPECT_TRUE(allows({serialization(true)}));
  EXPECT_TRUE(allows({priority(1), serialization(true)}));
}

TEST(LaunchAttributes, TwoSerializationAttributesThatDisagreeAllowNone) {
  // Which one the driver takes is not documented: counted as allowing only where none forbids.
  EXPECT_FALSE(allows({serialization(true), serialization(false)}));
  EXPECT_FALSE(allows({serialization(false), serialization(true)}));
  EXPECT_TRUE(allows({serialization(true), priority(0), serialization(true)}));
}

}  // namespace
}  // namespace pygraph
