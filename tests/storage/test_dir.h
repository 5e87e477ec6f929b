// A fresh temporary directory per test, removed afterwards unless RELGRAPH_KEEP_TEST_DIRS is
// set in the environment (to read a failed test's files and logs; its path goes to stderr).
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace relgraph::testing {

class TestDir {
 public:
  TestDir() {
    static std::atomic<int> counter{0};
    path_ = (std::filesystem::temp_directory_path() /
             ("relgraph_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++)))
                .string();
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TestDir() {
    if (std::getenv("RELGRAPH_KEEP_TEST_DIRS") != nullptr) {
      std::fprintf(stderr, "test directory kept: %s\n", path_.c_str());
      return;
    }
    std::filesystem::remove_all(path_);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace relgraph::testing
