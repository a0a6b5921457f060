// What graph mode does with each cuLaunchKernelEx attribute.
//
// cuBLAS's Hopper GEMMs and Triton's kernels arrive with attributes; a sequence must not break at
// each of them. A kernel node carries most launch attributes (cuGraphKernelNodeSetAttribute);
// programmatic stream serialization only allows a kernel to start before its predecessor ends,
// so leaving it out keeps full stream order, which is always correct (a programmatic edge in the
// graph, as stream capture makes, gained nothing on the GPU: docs/design-graph-mode.md, session
// 41); the shared-memory carveout
// is a performance hint that only launches take. Attributes whose effect a node cannot
// reproduce (an event the launch records, device-updatable nodes) keep the launch eager. Unknown
// attributes (a newer driver) are treated as eager: never guess.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace pygraph {

enum class AttrUse { kNode, kDrop, kEager };

constexpr AttrUse attr_use(CUlaunchAttributeID id) {
  switch (static_cast<int>(id)) {
    case CU_LAUNCH_ATTRIBUTE_IGNORE:
      return AttrUse::kDrop;
    case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
    case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:  // a hint, valid for launches only
      return AttrUse::kDrop;
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
    case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
    case CU_LAUNCH_ATTRIBUTE_PRIORITY:
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
    case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION:
      return AttrUse::kNode;
    default:
      return AttrUse::kEager;  // PROGRAMMATIC_EVENT, LAUNCH_COMPLETION_EVENT, ... and unknown ids
  }
}

// Whether a launch with these attributes may start before the kernel before it on its stream
// ends (programmatic stream serialization allowed), which its graph node no longer does: the
// stats count such nodes (graphs.programmatic_allowed). The driver's documentation does not say
// which of two such attributes in one launch counts: allowed only where one allows it and none
// forbids it.
inline bool allows_programmatic(const CUlaunchAttribute* attrs, uint32_t count) {
  bool allowed = false;
  for (uint32_t i = 0; i < count; ++i) {
    if (attrs[i].id != CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION) continue;
    if (!attrs[i].value.programmaticStreamSerializationAllowed) return false;
    allowed = true;
  }
  return allowed;
}

}  // namespace pygraph
