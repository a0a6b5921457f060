#!/usr/bin/env bash
# The source of another commit, for a side-by-side run of two builds on the GPU machine (which
# has no git): writes the commit's library sources into .oldsrc/ here; carry .oldsrc to the
# device, where `./scripts/bench.sh --old ...` builds it into build-old/ and runs every "+shim"
# cell of --arm-variants once more with it (cells "VARIANT+shim:old").
#   ./scripts/old-src.sh COMMIT
set -euo pipefail
cd "$(dirname "$0")/.."
commit=${1:?usage: scripts/old-src.sh COMMIT}
git rev-parse --verify -q "$commit^{commit}" >/dev/null || { echo "old-src: no commit $commit" >&2; exit 1; }
rm -rf .oldsrc && mkdir .oldsrc
git archive "$commit" CMakeLists.txt shim analyzer launcher tests/CMakeLists.txt tests/standin |
  tar -x -C .oldsrc
git rev-parse --short "$commit" >.oldsrc/COMMIT
echo "old-src: .oldsrc holds $(cat .oldsrc/COMMIT) ($(du -sh .oldsrc | cut -f1)); carry it with .debs"
