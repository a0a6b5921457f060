// Where the engine finds decisions made in earlier runs and leaves the ones it makes (warm
// start, issue 11). An interface, so that the engine stays free of files and clocks: the hooks
// give it one backed by the decision cache (decision_cache.h), tests a fake; none by default.
#pragma once

#include <functional>
#include <string>

#include "decisions/decision_cache.h"

namespace pygraph {

class DecisionStore {
 public:
  virtual ~DecisionStore() = default;
  // The verdict for a signature made for this GPU, driver and shim; null when there is none (or
  // only a stale one). Valid until the next record().
  virtual const Decision* find(const std::string& signature) = 0;
  // A verdict just measured; its environment is the store's to fill in.
  virtual void record(const std::string& signature, const Decision& d) = 0;
};

// A store over a DecisionCache. The environment is asked for on first use, not at construction:
// the device name needs an initialized driver, which the hooks' init may come before.
class CacheDecisionStore : public DecisionStore {
 public:
  CacheDecisionStore(DecisionCache* cache, std::function<DecisionEnvironment()> environment)
      : cache_(cache), environment_(std::move(environment)) {}

  const Decision* find(const std::string& signature) override;
  void record(const std::string& signature, const Decision& d) override;
  size_t stale() const { return stale_; }  // lookups that found another environment's verdict

 private:
  const DecisionEnvironment& env();

  DecisionCache* cache_;
  std::function<DecisionEnvironment()> environment_;
  DecisionEnvironment env_;
  bool have_env_ = false;
  size_t stale_ = 0;
};

}  // namespace pygraph
