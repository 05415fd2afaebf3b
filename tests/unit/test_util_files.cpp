// The file helpers (common/util/files.h): the 0600 write that never replaces, the atomic write,
// the permission check on secrets, and the path helpers. Real files in a temporary folder.
#include "common/util/files.h"
#include "test_kube_support.h"

#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

using namespace ichor;
using ichor::kube::testing::TempDir;

namespace {

unsigned mode_of(const std::string& path) {
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    return st.st_mode & 07777;
}

std::vector<std::string> names_in(const std::string& dir) {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        out.push_back(e.path().filename().string());
    }
    return out;
}

// Sets the umask for one scope: the writes must not depend on the caller's.
struct Umask {
    mode_t old;
    explicit Umask(mode_t m) : old(::umask(m)) {}
    ~Umask() { ::umask(old); }
};

} // namespace

TEST_CASE("read_file returns the bytes, a missing file is a config error naming it", "[util]") {
    TempDir t;
    std::string p = t.write("a.bin", std::string("x\0y\n", 4));
    auto r = util::read_file(p);
    REQUIRE(r.ok());
    CHECK(*r == std::string("x\0y\n", 4));

    auto missing = util::read_file(t.path() + "/nope");
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().kind == ErrorKind::Config);
    CHECK(missing.error().message == "open " + t.path() + "/nope: No such file or directory");
}

TEST_CASE("a private file is written with mode 0600, whatever the umask", "[util]") {
    TempDir t;
    for (mode_t mask : {mode_t{022}, mode_t{0777}, mode_t{0}}) {
        Umask u(mask);
        std::string p = t.path() + "/key-" + std::to_string(mask);
        REQUIRE(util::write_private_file(p, "secret\n").ok());
        CHECK(mode_of(p) == 0600);
        CHECK(t.read("key-" + std::to_string(mask)) == "secret\n");
    }
}

TEST_CASE("private files written without an fsync each are made durable by one sync", "[util]") {
    TempDir t;
    for (int i = 0; i < 3; ++i) {
        std::string p = t.path() + "/backup-" + std::to_string(i) + ".yaml";
        REQUIRE(util::write_private_file(p, "config " + std::to_string(i) + "\n", false).ok());
        CHECK(mode_of(p) == 0600);
    }
    CHECK(util::sync_filesystem(t.path()).ok());
    CHECK(t.read("backup-2.yaml") == "config 2\n");
    auto missing = util::sync_filesystem(t.path() + "/nope");
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().message == "open " + t.path() + "/nope: No such file or directory");
    auto not_folder = util::sync_filesystem(t.path() + "/backup-0.yaml");
    REQUIRE_FALSE(not_folder.ok());
    CHECK(not_folder.error().message == "open " + t.path() + "/backup-0.yaml: Not a directory");
}

TEST_CASE("a private file never replaces an existing one", "[util]") {
    TempDir t;
    std::string p = t.write("talosconfig", "old\n", 0644);
    auto st = util::write_private_file(p, "new\n");
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().kind == ErrorKind::Config);
    CHECK(st.error().message == p + " already exists; it is never overwritten");
    CHECK(st.error().hint == "choose another path, or move the existing file away first");
    CHECK(t.read("talosconfig") == "old\n");
    CHECK(mode_of(p) == 0644);
}

TEST_CASE("a private file in a missing folder is a config error naming the path", "[util]") {
    TempDir t;
    std::string p = t.path() + "/no/such/dir/key";
    auto st = util::write_private_file(p, "x");
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().kind == ErrorKind::Config);
    CHECK(st.error().message == "create " + p + ": No such file or directory");
}

TEST_CASE("an atomic write replaces the file, takes the mode given and leaves no temporary",
          "[util]") {
    TempDir t;
    Umask u(077);
    std::string p = t.write("cfg.yaml", "old\n", 0600);
    REQUIRE(util::write_file_atomic(p, "new\n", 0644).ok());
    CHECK(t.read("cfg.yaml") == "new\n");
    CHECK(mode_of(p) == 0644);
    CHECK(names_in(t.path()) == std::vector<std::string>{"cfg.yaml"});

    std::string fresh = t.path() + "/fresh";
    REQUIRE(util::write_file_atomic(fresh, "", 0600).ok());
    CHECK(mode_of(fresh) == 0600);
    CHECK(t.read("fresh").empty());
}

TEST_CASE("an atomic write into a missing folder names its temporary", "[util]") {
    TempDir t;
    std::string p = t.path() + "/missing/cfg";
    auto st = util::write_file_atomic(p, "x", 0600);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().kind == ErrorKind::Config);
    CHECK(st.error().message ==
          "create " + p + ".tmp." + std::to_string(::getpid()) + ": No such file or directory");
}

TEST_CASE("an atomic write over a folder fails at the rename and leaves no temporary", "[util]") {
    TempDir t;
    std::filesystem::create_directories(t.path() + "/taken/inside");
    std::string p = t.path() + "/taken";
    auto st = util::write_file_atomic(p, "x", 0600);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().message ==
          "rename " + p + ".tmp." + std::to_string(::getpid()) + ": Is a directory");
    CHECK(names_in(t.path()) == std::vector<std::string>{"taken"});
}

TEST_CASE("readable_by_others looks at the group and other read bits", "[util]") {
    TempDir t;
    CHECK_FALSE(util::readable_by_others(t.write("a", "", 0600)));
    CHECK_FALSE(util::readable_by_others(t.write("b", "", 0400)));
    CHECK_FALSE(util::readable_by_others(t.write("c", "", 0620))); // group may write, not read
    CHECK(util::readable_by_others(t.write("d", "", 0640)));
    CHECK(util::readable_by_others(t.write("e", "", 0604)));
    CHECK(util::readable_by_others(t.write("f", "", 0644)));
    CHECK_FALSE(util::readable_by_others(t.path() + "/missing"));
}

TEST_CASE("expand_home and dirname", "[util]") {
    CHECK(util::expand_home("~/.talos/config", "/home/u") == "/home/u/.talos/config");
    CHECK(util::expand_home("~", "/home/u") == "/home/u");
    CHECK(util::expand_home("~other/x", "/home/u") == "~other/x");
    CHECK(util::expand_home("/etc/~/x", "/home/u") == "/etc/~/x");
    CHECK(util::expand_home("rel", "/home/u") == "rel");

    CHECK(util::dirname("secrets.yaml") == ".");
    CHECK(util::dirname("/secrets.yaml") == "/");
    CHECK(util::dirname("/a/b/c.yaml") == "/a/b");
    CHECK(util::dirname("a/b") == "a");
}
