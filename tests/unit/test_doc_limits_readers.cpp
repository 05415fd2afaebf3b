// Every reader of user input (docs/design.md, "Limits of the readers"): the stream, kubeconfig,
// talosconfig, secrets bundle, Cilium values, patches and Helm records each refuse an alias bomb,
// deep nesting and an oversized input with the reader limits' error (code InputLimit, its hint),
// not a reader-specific one that hides it. A refusal that came only after expanding would exhaust
// memory or run into ctest's timeout here. test_doc_limits.cpp tests the limits themselves.
#include "common/bundle/bundle.h"
#include "common/cni/helm_record.h"
#include "common/cni/values.h"
#include "common/doc/limits.h"
#include "common/doc/resource_list.h"
#include "common/kube/config.h"
#include "common/render/patch.h"
#include "common/talos/talosconfig.h"
#include "common/util/files.h"
#include "common/util/strings.h"
#include "test_kube_support.h"

#include <catch2/catch.hpp>

#include <functional>
#include <sstream>
#include <string>

using namespace ichor;

namespace {

// The 342-byte "billion laughs" of test_doc_limits.cpp, as a mapping (every reader takes one).
std::string alias_bomb() {
    std::string s =
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
    for (char c = 'b'; c <= 'i'; ++c) {
        s += std::string(1, c) + ": &" + c + " [";
        for (int i = 0; i < 9; ++i) {
            s += std::string(i == 0 ? "" : ",") + "*" + static_cast<char>(c - 1);
        }
        s += "]\n";
    }
    return s;
}

// The same bomb in flow style, a text that starts like JSON (Helm's records are JSON).
std::string flow_alias_bomb() {
    std::string s =
        "{\"a\": &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]";
    for (char c = 'b'; c <= 'i'; ++c) {
        s += std::string(", \"") + c + "\": &" + c + " [";
        for (int i = 0; i < 9; ++i) {
            s += std::string(i == 0 ? "" : ",") + "*" + static_cast<char>(c - 1);
        }
        s += "]";
    }
    return s + "}";
}

std::string deep(size_t n) {
    return "a: " + std::string(n, '[') + std::string(n, ']') + "\n";
}

std::string deep_json(size_t n) {
    return "{\"a\": " + std::string(n, '[') + std::string(n, ']') + "}";
}

// A mapping of one long string: valid YAML, one byte over one document's limit.
std::string oversized() {
    const size_t pad = doc::k_limits.max_document_bytes + 1 - 6;
    return "a: \"" + std::string(pad, 'x') + "\"\n";
}

// A reader under test: text in, the error out (nullopt when it accepted the text).
using Reader = std::function<std::optional<Error>(const std::string&)>;

template <typename R> std::optional<Error> error_of(const R& r) {
    if (r.ok()) {
        return std::nullopt;
    }
    return r.error();
}

// The refusal: the limits' code and hint, the reader's kind, a message that names `source` first
// and says what was exceeded.
void check_refusal(const Reader& read, const std::string& text, ErrorKind kind,
                   const std::string& source, const std::string& detail) {
    auto e = read(text);
    REQUIRE(e.has_value());
    CHECK(e->code == "InputLimit");
    CHECK(e->kind == kind);
    CHECK_THAT(e->message, Catch::StartsWith(source + ":"));
    CHECK_THAT(e->message, Catch::Contains(detail));
    CHECK_THAT(e->hint, Catch::Contains("Limits of the readers"));
}

const std::string k_aliasing = "the document contains excessive aliasing (";
const std::string k_nesting = "the input nests deeper than 256 levels";
const std::string k_oversized = ": the input is 3145729 bytes, over the limit of 3145728 bytes";

// The three hostile inputs against one reader of one document.
void check_reader(const Reader& read, ErrorKind kind, const std::string& source,
                  const std::string& oversized_detail = k_oversized) {
    SECTION("an alias bomb") {
        check_refusal(read, alias_bomb(), kind, source, k_aliasing);
    }
    SECTION("deep nesting") {
        check_refusal(read, deep(100000), kind, source, k_nesting);
    }
    SECTION("an oversized document") {
        check_refusal(read, oversized(), kind, source, source + oversized_detail);
    }
}

} // namespace

TEST_CASE("the stream reader refuses hostile input", "[doc][limits][readers]") {
    Reader read = [](const std::string& t) {
        return error_of(doc::read_resource_list(t, "<stdin>"));
    };
    SECTION("an alias bomb") {
        check_refusal(read, alias_bomb(), ErrorKind::Usage, "<stdin>", k_aliasing);
    }
    SECTION("deep nesting") {
        check_refusal(read, deep(100000), ErrorKind::Usage, "<stdin>", k_nesting);
    }
    SECTION("an oversized stream, from a pipe that never ends, is not read to its end") {
        // A stream's limit is 64 MiB; a reader of standard input stops one byte past it.
        std::string big(util::k_max_read_bytes + 1, '#');
        std::istringstream in(big);
        auto r = util::read_stream(in, "<stdin>");
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().code == "InputLimit");
        CHECK(r.error().message ==
              "<stdin>: the input is larger than the limit of 67108864 bytes (64 MiB)");
        std::istringstream small("items: []\n");
        CHECK(util::read_stream(small, "<stdin>").ok());
    }
}

TEST_CASE("a file without end is refused at the reader's limit, not read to its end",
          "[doc][limits][readers]") {
    auto r = util::read_file("/dev/zero", 1u << 20);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "InputLimit");
    CHECK(r.error().kind == ErrorKind::Usage);
    CHECK(r.error().message ==
          "/dev/zero: the input is larger than the limit of 1048576 bytes (1 MiB)");
    // A file of exactly the limit is read.
    kube::testing::TempDir dir;
    std::string exact = dir.write("exact", std::string(4096, 'x'));
    auto ok = util::read_file(exact, 4096);
    REQUIRE(ok.ok());
    CHECK(ok->size() == 4096);
    CHECK_FALSE(util::read_file(exact, 4095).ok());
}

TEST_CASE("the kubeconfig reader refuses hostile input", "[kube][limits][readers]") {
    kube::testing::TempDir dir;
    Reader read = [&dir](const std::string& t) {
        return error_of(kube::merge_kubeconfigs({dir.write("config", t)}, false));
    };
    // The file is read up to its limit, so an oversized one is refused before it is parsed.
    check_reader(read, ErrorKind::Config, "kubeconfig: " + dir.path() + "/config",
                 ": the input is larger than the limit of 3145728 bytes (3 MiB)");
    SECTION("a kubeconfig without end") {
        auto r = kube::merge_kubeconfigs({"/dev/zero"}, false);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().code == "InputLimit");
        CHECK(r.error().kind == ErrorKind::Config);
        CHECK(r.error().message ==
              "kubeconfig: /dev/zero: the input is larger than the limit of 3145728 bytes (3 MiB)");
    }
}

TEST_CASE("the talosconfig reader refuses hostile input", "[talos][limits][readers]") {
    Reader read = [](const std::string& t) {
        return error_of(talos::parse_talosconfig(t, "talosconfig.yaml"));
    };
    check_reader(read, ErrorKind::Config, "talosconfig.yaml");
    SECTION("a talosconfig without end") {
        auto r = talos::load_talosconfig("/dev/zero", Environment{});
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().code == "InputLimit");
        CHECK(r.error().kind == ErrorKind::Config);
        CHECK(
            r.error().message ==
            "talosconfig: /dev/zero: the input is larger than the limit of 3145728 bytes (3 MiB)");
    }
}

TEST_CASE("the secrets bundle reader refuses hostile input", "[bundle][limits][readers]") {
    Reader read = [](const std::string& t) { return error_of(bundle::parse(t, "secrets.yaml")); };
    check_reader(read, ErrorKind::Config, "secrets.yaml");
}

TEST_CASE("the Cilium values reader refuses hostile input", "[cni][limits][readers]") {
    Reader read = [](const std::string& t) { return error_of(cni::read_values(t, "values.yaml")); };
    check_reader(read, ErrorKind::Usage, "values.yaml");
}

TEST_CASE("the patch reader refuses hostile input", "[render][limits][readers]") {
    Reader read = [](const std::string& t) {
        return error_of(render::parse_patch(t, "spec.patch"));
    };
    SECTION("an alias bomb") {
        check_refusal(read, alias_bomb(), ErrorKind::Findings, "spec.patch", k_aliasing);
    }
    SECTION("deep nesting") {
        check_refusal(read, deep(100000), ErrorKind::Findings, "spec.patch", k_nesting);
    }
    SECTION("an oversized patch") {
        // A patch is a stream of documents (64 MiB); the TalosConfigPatch that carries it is
        // bounded at 3 MiB by the apiserver before it reaches the render.
        std::string big = "a: \"" + std::string(doc::k_limits.max_stream_bytes, 'x') + "\"\n";
        check_refusal(read, big, ErrorKind::Findings, "spec.patch",
                      "spec.patch: the input is 67108870 bytes, over the limit of 67108864 bytes");
    }
}

TEST_CASE("the Helm record reader refuses hostile input", "[cni][limits][readers]") {
    Reader read = [](const std::string& t) {
        return error_of(cni::decode_release(util::base64_encode(t), "record"));
    };
    SECTION("an alias bomb in a record that starts like JSON") {
        // A record that starts with "{" is read as JSON, which has no aliases: refused as
        // malformed where the first anchor stands, nothing expanded.
        auto e = read(flow_alias_bomb());
        REQUIRE(e.has_value());
        CHECK(e->kind == ErrorKind::Config);
        CHECK(e->code == "MalformedInput");
        CHECK_THAT(e->message, Catch::StartsWith("record:1:7: malformed JSON"));
        // And one that does not is no Helm record at all (test_cni_helm_record.cpp).
        CHECK(read(alias_bomb())->message == "record: not a Helm release (not a JSON object)");
    }
    SECTION("deep nesting") {
        check_refusal(read, deep_json(100000), ErrorKind::Config, "record", k_nesting);
    }
    SECTION("an oversized record") {
        // Past the Secret's 1 MiB before decoding; past 16 MiB inflated is test_cni_helm_record.
        std::string big = "{\"a\": \"" + std::string(1u << 20, 'x') + "\"}";
        auto e = read(big);
        REQUIRE(e.has_value());
        CHECK(e->code == "InputLimit");
        CHECK(e->kind == ErrorKind::Config);
        CHECK_THAT(e->message, Catch::StartsWith("record: the release is "));
        CHECK_THAT(e->message, Catch::Contains(" bytes encoded"));
    }
}

TEST_CASE("a comma where a document's node should start is refused, not read forever",
          "[doc][limits][readers]") {
    // yaml-cpp 0.7 emits empty documents at the comma without end (found by tests/fuzz/fuzz_bundle:
    // one byte took 13 GB in a minute); every reader goes through the same parse.
    for (const std::string text :
         {",", ",-\xe4\xff\xff\xff\xff\xff\xff\x7f", "- a\n,", "---\n,", "a: 1\n---\n,"}) {
        auto r = doc::parse_documents(text, "input");
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().code == "MalformedInput");
        CHECK_THAT(r.error().message,
                   Catch::Contains(": malformed YAML: the reader cannot go on from here"));
        CHECK(bundle::parse(text, "secrets.yaml").error().kind == ErrorKind::Config);
    }
    CHECK(doc::parse_documents(",", "input").error().message ==
          "input:1:1: malformed YAML: the reader cannot go on from here (a \",\" outside a flow "
          "collection?)");
    // A comma inside a flow collection, or in a plain scalar, is YAML as usual.
    auto ok = doc::parse_documents("a: [1, 2]\nb: x, y\n", "input");
    REQUIRE(ok.ok());
    CHECK((*ok)[0]["b"] == "x, y");
}
