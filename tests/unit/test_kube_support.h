// Helpers shared by the test_kube_*.cpp files: a temporary folder and small files in it.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace ichor::kube::testing {

class TempDir {
  public:
    TempDir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "ichor-kube-XXXXXX").string();
        m_path = ::mkdtemp(tmpl.data());
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(m_path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    [[nodiscard]] const std::string& path() const { return m_path; }
    // Writes PATH (relative to the folder, parents made) and returns its full path.
    std::string write(const std::string& rel, const std::string& content,
                      unsigned mode = 0644) const {
        std::filesystem::path p = std::filesystem::path(m_path) / rel;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << content;
        ::chmod(p.c_str(), mode);
        return p.string();
    }
    [[nodiscard]] std::string read(const std::string& rel) const {
        std::ifstream in(std::filesystem::path(m_path) / rel, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
    }

  private:
    std::string m_path;
};

} // namespace ichor::kube::testing
