// Runs a fuzz target's inputs once each, without libFuzzer: in the ordinary (gcc) build, ctest
// replays the seed corpus this way, so every target builds and no seed crashes it. Arguments:
// files, or directories whose files are inputs.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  std::vector<std::string> inputs;
  for (int i = 1; i < argc; ++i) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      std::fprintf(stderr, "no such input: %s\n", argv[i]);
      return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
      inputs.push_back(argv[i]);
      continue;
    }
    DIR* d = opendir(argv[i]);
    while (const dirent* e = d ? readdir(d) : nullptr) {
      if (e->d_name[0] != '.') inputs.push_back(std::string(argv[i]) + "/" + e->d_name);
    }
    if (d) closedir(d);
  }
  std::sort(inputs.begin(), inputs.end());
  for (const std::string& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    const std::string data = s.str();
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()), data.size());
  }
  std::printf("%zu inputs, no crash\n", inputs.size());
  return inputs.empty() ? 1 : 0;
}
