// Differential tests of the fast block-YAML reader: for every input, read_block_yaml either gives
// up or returns exactly what the yaml-cpp path returns (types, values, key order).
#include "common/doc/yaml_block.h"
#include "common/util/files.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

using namespace ichor::doc;

namespace {

const std::string k_source_dir = ICHOR_SOURCE_DIR;
const std::string k_fixture = k_source_dir + "/tests/unit/data/talos-config-commented.yaml";

// Equality that also tells 1 from 1.0 and signed from unsigned, and objects by key order.
bool same(const Value& a, const Value& b) {
    if (a.type() != b.type() || a.size() != b.size()) {
        return false;
    }
    if (a.is_object()) {
        for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
            if (ia.key() != ib.key() || !same(ia.value(), ib.value())) {
                return false;
            }
        }
        return true;
    }
    if (a.is_array()) {
        for (size_t i = 0; i < a.size(); ++i) {
            if (!same(a[i], b[i])) {
                return false;
            }
        }
        return true;
    }
    return a == b;
}

std::string show(const std::vector<Value>& docs) {
    std::string s;
    for (const auto& d : docs) {
        s += d.dump(-1, ' ', false, Value::error_handler_t::replace) + "\n";
    }
    return s;
}

enum class Expect { Accept, GiveUp, Either };

// Checks the differential property; returns whether the fast reader accepted `text`.
bool check_differential(const std::string& text) {
    auto fast = read_block_yaml(text);
    if (!fast) {
        return false;
    }
    auto slow = parse_documents_yaml_cpp(text, "input");
    INFO("input:\n" << text << "\n-- fast:\n" << show(*fast));
    if (!slow.ok()) {
        FAIL("the fast reader accepted what yaml-cpp rejects: " << slow.error().message);
    }
    INFO("-- yaml-cpp:\n" << show(*slow));
    REQUIRE(fast->size() == slow->size());
    for (size_t i = 0; i < fast->size(); ++i) {
        CHECK(same((*fast)[i], (*slow)[i]));
    }
    return true;
}

void check_case(const std::string& text, Expect expect) {
    bool accepted = check_differential(text);
    INFO("input:\n" << text);
    if (expect == Expect::Accept) {
        CHECK(accepted);
    } else if (expect == Expect::GiveUp) {
        CHECK_FALSE(accepted);
    }
}

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    size_t start = 0;
    while (start < text.size()) {
        size_t nl = text.find('\n', start);
        if (nl == std::string::npos) {
            nl = text.size();
        }
        lines.push_back(text.substr(start, nl - start));
        start = nl + 1;
    }
    return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
    std::string s;
    for (const auto& l : lines) {
        s += l;
        s += '\n';
    }
    return s;
}

std::string read_fixture() {
    auto text = ichor::util::read_file(k_fixture);
    REQUIRE(text.ok());
    return *text;
}

} // namespace

const char* const k_accepted[] = {
    "",
    "# only a comment\n",
    "a: 1\n",
    "a: 1",
    "a:\n  b:\n    c: x\n  d: y\ne: z\n",
    "list:\n- a\n- b\nnext: 1\n",
    "list:\n  - a\n  - b\n",
    "- a\n- b\n",
    "- name: one\n  v: 2\n- name: two\n",
    "-   name: wide\n    v: 2\n",
    "- - nested\n  - second\n- x\n",
    "- - - deep\n",
    "-\n  a: 1\n-\n",
    "- a:\n  - x\n  - y\n  b: 1\n",
    "a:\nb: ~\nc: null\nd:\n",
    "a: 1\n---\nb: 2\n",
    "---\na: 1\n---\n---\n# c\n---\nb: 2\n...\n",
    "--- # first\na: 1\n...\n---\nb: 2\n",
    "~\n",
    "---\nnull\n---\nx\n",
    "a: 1 # trailing\n# full\n  # indented comment\nb: 'x' # c\n",
    "\n\na: 1\n\n\nb: 2\n\n",
    "a: value   \nb: x  # c\n",
    "a: x#y\nb: 'a # b'\nc: \"a # b\"\n",
    "url: http://x:8080/y\nk: key:value\n",
    "key:value\n",
    "a: -foo\nb: --flag\nc: -1\nd: -\"x\"\n",
    "a: 'it''s'\nb: ''\nc: ' lead'\n",
    "a: \"\\\\ \\\" \\n \\t \\r \\/ \\0 \\x41 \\u00e9 \\U0001F600\"\n",
    "a: \"caf\xc3\xa9\"\nb: caf\xc3\xa9\n",
    "a: []\nb: {}\n",
    "- []\n- {}\n",
    "a: true\nb: False\nc: 0755\nd: 1e3\ne: 0.5\nf: 1.50\ng: 18446744073709551615\n",
    "a: 123456789012345678901234567890\nb: 0x1f\nc: yes\nd: on\ne: -0\n",
    "\"quoted key\": 1\n'single': 2\n\"0755\": 3\n\"\": 4\n",
    "dup: 1\nother: 2\ndup: 3\n",
    "a: {}\na:\n  b: 1\n",
    "net.core.somaxconn: \"65535\"\nnode.kubernetes.io/exclude: \"\"\n",
    "  a: 1\n  b: 2\n",
    "a: |\n  line one\n    indented\n  last\nb: 1\n",
    "a: |-\n  x\n  y\n",
    "a: |+\n  x\n\n\nb: 1\n",
    "a: |\n  x\n\n\nb: 1\n",
    "a: |-\n  x\n\n\n",
    "a: |+\n  x\n\n",
    "a: |\n  x",
    "a: |-\n  x",
    "a: |+\n  x",
    "a: |\n\n  x\n\n  y\n",
    "a: |2\n    four\n  two\n",
    "a: |2-\n   x\n",
    "a: |-2\n   x\n",
    "a: |+2\n   x\n\n",
    "a: | # comment\n  x\n",
    "a: |\n  # not a comment\n  x: y\n  - z\n",
    "- |\n  item\n- |-\n  two\n",
    "- a: |\n    x\n  b: 2\n",
    "a: |\n  x\n---\nb: |+\n  y\n\n---\nc: 1\n",
    "a: |\n  x\n# c\n  # d\nb: 1\n",
    "a: |\n  x  \n  y\n",
    "a:\n  \"scalar\"\n",
    "a:\n  plain\nb: 1\n",
    "a: [] \n",
    "a: 'x'   \n",
    "'a': 'b'\n",
    "a: b,c [d] {e}\n",
    "a: \"\"\n",
    "a: x ##\n",
    "a: ---\nb: ...\nc:\n- ---\n",
    "a:\n  |\n   x\n",
    "- a: |2\n     x\n",
    "a:\n- |1\n  x\n",
    "a:\n  |1\n  x\n",
    "- - |1\n    x\n",
    "a: b # c\td\n",
    "a: 12:30\nb: 1_000\nc: .5\nd: +1\ne: .inf\nf: 1.0\ng: 0.1\n",
    "k: v\n--- \nk2: v\n",
    "- -\n",
    "-\n-\n",
    "- -foo\n- -1\n",
    "\"a\\nb\": 1\n'it''s': 2\n",
    "a: 1\n\"a\": 2\nb: 3\n",
    "1: a\ntrue: b\n1.5: c\n",
    "a: =\nb: <<\n",
    "a: \"\\x41\\xe9\"\n",
};

TEST_CASE("block reader: structures it must accept", "[doc][yaml_block]") {
    for (const char* text : k_accepted) {
        check_case(text, Expect::Accept);
    }
}

const char* const k_given_up[] = {
    "a:\n\tb: 1\n",
    "a: \tb\n",
    "a: b\t# c\n",
    "a:\n  - b\n  c: 1\n",
    "a: &x 1\nb: *x\n",
    "a: !!str 1\n",
    "a: !custom x\n",
    "%YAML 1.2\n---\na: 1\n",
    "a: >\n  folded\n",
    "a: [1, 2]\n",
    "a: {b: 1}\n",
    "a: multi\n  line\n",
    "a: \"multi\n  line\"\n",
    "a: 'multi\n  line'\n",
    "? complex\n: key\n",
    "\xef\xbb\xbf"
    "a: 1\n",
    "a: 1\r\nb: 2\r\n",
    "a: \"\\e\"\n",
    "a: \"\\ud800\"\n",
    "null: 1\n",
    "~: 1\n",
    "[a]: 1\n",
    "a b: 1\n",
    "key: value: x\n",
    "key: - x\n",
    "a: |\n",
    "a: |\nb: 1\n",
    "|\n  top\n",
    "a: |0\n  x\n",
    "a: 1\n...\nb: 2\n",
    "a: 1\n  b: 2\n",
    "a:\n    b: 1\n  c: 2\n",
    "- a\nb: 1\n",
    "a: 1\n- b\n",
    "a: x:\n",
    "---x\n",
    "--- a\n",
    "a: \"x\"y\n",
    "a: \"x\"#y\n",
    "a: @x\n",
    "a: `x`\n",
    "a: \"\\\n",
};

TEST_CASE("block reader: what it gives up on", "[doc][yaml_block]") {
    for (const char* text : k_given_up) {
        check_case(text, Expect::GiveUp);
    }
}

const char* const k_either[] = {
    "a: |2\n  x\n\n   \n",
    "a: |\n  x\n   \n",
    "a: |\n   \n  x\n",
    "a: |+\n  x\n  ",
    "a: |+\n  x\n\n# c\n\nb: 1\n",
    "...\n",
    "---\n...\n",
    "a: 1\n...\n...\n",
    "a:\n- b\n -c\n",
    "a: :x\n",
    "a: ?x\n",
    "a: x\n b\n",
    "-foo: 1\n",
    "a:  \n  - x\n",
    "a: -\n",
    "<<: 1\n",
    "a: \"\\x80\"\n",
    "a: \"\\u0000\"\n",
    "\"a\"\n",
    "a:b: c\n",
};

TEST_CASE("block reader: edge cases agree with yaml-cpp either way", "[doc][yaml_block]") {
    for (const char* text : k_either) {
        check_case(text, Expect::Either);
    }
}

TEST_CASE("parse_documents: what the block reader gives up on gets yaml-cpp's error",
          "[doc][yaml_block]") {
    auto bad = parse_documents("a: 1\n  b: 2\n", "in.yaml");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message == "in.yaml:2:4: malformed YAML: illegal map value");
    auto good = parse_documents("a: 1\n---\nb: [x]\n", "in.yaml");
    REQUIRE(good.ok());
    CHECK(good->size() == 2);
}

TEST_CASE("block reader: the repository's YAML files", "[doc][yaml_block]") {
    int files = 0;
    int accepted = 0;
    for (const char* dir : {"/tests", "/deploy"}) {
        for (const auto& e : std::filesystem::recursive_directory_iterator(k_source_dir + dir)) {
            if (!e.is_regular_file() || e.path().extension() != ".yaml") {
                continue;
            }
            auto text = ichor::util::read_file(e.path().string());
            REQUIRE(text.ok());
            INFO(e.path().string());
            ++files;
            accepted += check_differential(*text) ? 1 : 0;
        }
    }
    CHECK(files > 40);
    // The emitter's output (golden render results, drift data) is what the reader is for.
    CHECK(accepted * 2 > files);
}

TEST_CASE("block reader: a commented Talos configuration", "[doc][yaml_block]") {
    std::string text = read_fixture();
    REQUIRE(check_differential(text));
    auto docs = read_block_yaml(text);
    REQUIRE(docs);
    REQUIRE(docs->size() == 2);
    CHECK((*docs)[0]["machine"]["type"] == "worker");
    CHECK((*docs)[0]["cluster"]["network"]["podSubnets"][0] == "10.244.0.0/16");
    CHECK((*docs)[1]["kind"] == "HostnameConfig");
}

// Truncates at, deletes, indents by one space and glues to the next line each line that is not a
// comment or blank (perturbing those gives the same document unless a block scalar takes them,
// which the byte-level test covers) and checks each variant; returns how many the reader accepted.
int perturb_lines(const std::string& text, int& perturbed) {
    const std::vector<std::string> lines = split_lines(text);
    int accepted = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
        size_t first = lines[i].find_first_not_of(' ');
        if (first == std::string::npos || lines[i][first] == '#') {
            continue;
        }
        ++perturbed;
        std::vector<std::string> truncated(lines.begin(), lines.begin() + static_cast<long>(i));
        std::vector<std::string> deleted = lines;
        deleted.erase(deleted.begin() + static_cast<long>(i));
        std::vector<std::string> indented = lines;
        indented[i] = " " + indented[i];
        std::vector<std::string> joined = lines; // the next line glued on: long plain scalars
        if (i + 1 < lines.size()) {
            joined[i] += " " + joined[i + 1];
            joined.erase(joined.begin() + static_cast<long>(i) + 1);
        }
        for (const auto* variant : {&truncated, &deleted, &indented, &joined}) {
            accepted += check_differential(join_lines(*variant)) ? 1 : 0;
        }
    }
    return accepted;
}

TEST_CASE("block reader: perturbed configurations never diverge from yaml-cpp",
          "[doc][yaml_block]") {
    SECTION("the commented Talos configuration") {
        int perturbed = 0;
        int accepted = perturb_lines(read_fixture(), perturbed);
        CHECK(perturbed > 50);
        // Truncations and most deletions are still valid YAML and must stay on the fast path.
        CHECK(accepted > perturbed * 3 / 2);
    }
    SECTION("the emitter's output, with block scalars") {
        auto text = ichor::util::read_file(k_source_dir +
                                           "/tests/golden/render/expected/cp-1.13-patched.yaml");
        REQUIRE(text.ok());
        REQUIRE(text->find(": |") != std::string::npos);
        int perturbed = 0;
        int accepted = perturb_lines(*text, perturbed);
        CHECK(perturbed > 100);
        CHECK(accepted > perturbed * 3 / 2);
    }
}

// Every feature of the reader in one stream, small enough to perturb byte by byte.
const char* const k_features = R"(# features
plain: value # comment
num: 42
neg: -7
str: "a \"b\" \\ \n \t \u00e9"
single: 'it''s # not a comment'
empty:
nulls: ~
flow: []
obj: {}
url: http://x:1/y
"quoted": k
list:
- a
- b: 1
  c: 2
- - nested
  - more
deep:
  seq:
    - |
      literal
        kept
    - |-
      stripped
    - |+
      kept

  after: x
block: |2
   lead
---
second: doc
...
---
- top
-
  k: v
)";

TEST_CASE("block reader: byte-level mutations of every feature never diverge from yaml-cpp",
          "[doc][yaml_block]") {
    const std::string base = k_features;
    REQUIRE(check_differential(base));
    int accepted = 0;
    for (size_t i = 0; i <= base.size(); ++i) {
        if (i < base.size()) {
            accepted += check_differential(base.substr(0, i) + base.substr(i + 1)) ? 1 : 0;
        }
        for (char c : {' ', '\n', ':', '#', '-', '"', '\'', '|', '\t'}) {
            std::string v = base;
            v.insert(i, 1, c);
            accepted += check_differential(v) ? 1 : 0;
        }
    }
    CHECK(accepted > static_cast<int>(base.size()));
}
