// Helpers of the config tests: scratch folders under the build tree, files, scoped env vars.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"

namespace nucleo::test {

/// A fresh folder for the running test: <build>/test-tmp/config/<suite>.<test>.
inline std::filesystem::path scratch_dir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::filesystem::path dir = std::filesystem::path(NUCLEO_BINARY_DIR) / "test-tmp" /
                                      "config" /
                                      (std::string(info->test_suite_name()) + "." + info->name());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

inline std::filesystem::path write_file(const std::filesystem::path& path,
                                        const std::string& text) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
    return path;
}

inline std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// The message of loading `file`, which must be a kConfig refusal.
inline std::string refusal_of(const std::filesystem::path& file) {
    try {
        Config::load(file);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kConfig) << e.what();
        return e.what();
    }
    ADD_FAILURE() << file << " loaded, a refusal was expected";
    return "";
}

/// Sets (or unsets, with nullopt) an environment variable for the scope, then restores it.
class ScopedEnv {
  public:
    ScopedEnv(std::string name, const std::optional<std::string>& value) : name_(std::move(name)) {
        if (const char* old = std::getenv(name_.c_str())) old_ = old;
        if (value) {
            ::setenv(name_.c_str(), value->c_str(), 1);
        } else {
            ::unsetenv(name_.c_str());
        }
    }
    ~ScopedEnv() {
        if (old_) {
            ::setenv(name_.c_str(), old_->c_str(), 1);
        } else {
            ::unsetenv(name_.c_str());
        }
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

  private:
    std::string name_;
    std::optional<std::string> old_;
};

}  // namespace nucleo::test
