// Randomized differential testing: a generated-program binary (random_program,
// random_loop_program: "PROGRAM FIRST_SEED COUNT" prints "<seed> <digest>" per seed) is run
// without the shim and under it; every seed's digest of what the host observed must be equal.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace pygraph::test {

// Runs `seeds` generated programs without and with the shim in `mode` (stand-in driver, a
// trace written too), adds a test failure naming the first seed whose digests differ, and
// returns the shim's PYGRAPH_STATS (not an object if none was written). `env` is added to both
// runs (STANDIN_ASYNC=1 for the asynchronous stand-in).
nlohmann::json expect_same_digests(
    const std::string& program, int seeds, const char* mode,
    const std::vector<std::pair<std::string, std::string>>& env = {});

}  // namespace pygraph::test
