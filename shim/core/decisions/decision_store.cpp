#include "decisions/decision_store.h"

#include <ctime>

namespace pygraph {

const DecisionEnvironment& CacheDecisionStore::env() {
  if (!have_env_) {
    env_ = environment_();
    have_env_ = true;
  }
  return env_;
}

const Decision* CacheDecisionStore::find(const std::string& signature) {
  const Decision* d = nullptr;
  switch (cache_->find(signature, env(), &d)) {
    case DecisionCache::Lookup::kFound:
      return d;
    case DecisionCache::Lookup::kStale:
      ++stale_;  // measured again; the new verdict overwrites it
      return nullptr;
    case DecisionCache::Lookup::kMissing:
      return nullptr;
  }
  return nullptr;
}

void CacheDecisionStore::record(const std::string& signature, const Decision& d) {
  Decision entry = d;
  entry.env = env();
  entry.updated = static_cast<int64_t>(std::time(nullptr));
  cache_->put(signature, entry);
}

}  // namespace pygraph
