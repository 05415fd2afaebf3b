// configpatcher-cases: the patch engine (common/render/patch.h) over every case of Talos's own
// configpatcher tests, read from a machinery module in the Go module cache (run.sh finds it):
//
//   configpatcher-cases v1.14.1=/root/go/pkg/mod/github.com/siderolabs/talos/pkg/machinery@v1.14.1
//
// A case is a Test function of config/configpatcher/apply_test.go that loads patches: its base
// configuration (an embedded file, or none for container.New()), its patches in order, and what
// Talos's test expects: an embedded file equal to the result, an error (EqualError,
// ErrorContains) or a number of documents. The engine's result is compared with the expected file
// document by document, semantically (documents by identity; nulls, empty strings and empty
// containers dropped, as Talos's typed fields make them equal to absent; key order ignored;
// scalars by their text). Prints one line per case; exits 1 when any case differs, when a Test
// function loads patches in a way this reader does not understand (a new kind of case must not
// pass unseen), or when a version has no case at all.
#include "common/doc/value.h"
#include "common/render/patch.h"
#include "common/util/files.h"

#include <iostream>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace {

using ichor::doc::Value;
using Json = nlohmann::json; // unordered: key order does not count

struct Case {
    std::string name;
    std::string config; // testdata path; empty: an empty configuration
    std::vector<std::string> patches;
    std::string expected;       // testdata path of the expected result
    std::string error_equal;    // the error Talos returns, exactly
    std::string error_contains; // a part of it
    int documents = -1;         // the number of documents of the result
};

std::string after_match(const std::smatch& m, size_t i) {
    return m[i].matched ? m[i].str() : std::string();
}

// The cases of one apply_test.go; an error message when a case cannot be read.
std::vector<Case> read_cases(const std::string& source, std::string& problem) {
    std::map<std::string, std::string> embeds; // Go variable -> testdata path
    static const std::regex embed(R"(//go:embed (\S+)\s*\nvar (\w+) )");
    for (std::sregex_iterator it(source.begin(), source.end(), embed), end; it != end; ++it) {
        embeds[(*it)[2].str()] = (*it)[1].str();
    }
    std::vector<Case> cases;
    static const std::regex func(R"(\nfunc (Test\w+)\(t \*testing\.T\) \{)");
    std::vector<std::pair<std::string, size_t>> starts;
    for (std::sregex_iterator it(source.begin(), source.end(), func), end; it != end; ++it) {
        starts.emplace_back((*it)[1].str(), static_cast<size_t>(it->position(0)));
    }
    for (size_t i = 0; i < starts.size(); ++i) {
        size_t from = starts[i].second;
        size_t to = i + 1 < starts.size() ? starts[i + 1].second : source.size();
        const std::string body = source.substr(from, to - from);
        static const std::regex load(R"(LoadPatches\(\[\]string\{([^}]*)\}\))");
        std::smatch m;
        if (!std::regex_search(body, m, load)) {
            continue; // not a patching case
        }
        Case c;
        c.name = starts[i].first;
        const std::string list = m[1].str();
        static const std::regex item("\"@([^\"]+)\"");
        for (std::sregex_iterator it(list.begin(), list.end(), item), end; it != end; ++it) {
            c.patches.push_back((*it)[1].str());
        }
        static const std::regex from_bytes(R"(configloader\.NewFromBytes\((\w+)\))");
        static const std::regex empty_config(R"(container\.New\(\))");
        if (std::regex_search(body, m, from_bytes) && embeds.contains(m[1].str())) {
            c.config = embeds[m[1].str()];
        } else if (!std::regex_search(body, empty_config)) {
            problem = c.name + ": no base configuration this reader understands";
            return {};
        }
        static const std::regex equal(
            R"(assert\.Equal\(t, (?:string\()?(\w+)\)?, string\(bytes\)\))");
        static const std::regex equal_error("assert\\.EqualError\\(t, err, \"([^\"]*)\"\\)");
        static const std::regex contains("require\\.ErrorContains\\(t, err, `([^`]*)`\\)");
        static const std::regex len(R"(require\.Len\(t, patched\.Documents\(\), (\d+)\))");
        if (std::regex_search(body, m, equal) && embeds.contains(m[1].str())) {
            c.expected = embeds[m[1].str()];
        } else if (std::regex_search(body, m, equal_error)) {
            c.error_equal = after_match(m, 1);
        } else if (std::regex_search(body, m, contains)) {
            c.error_contains = after_match(m, 1);
        } else if (std::regex_search(body, m, len)) {
            c.documents = std::stoi(m[1].str());
        } else {
            problem = c.name + ": no expectation this reader understands";
            return {};
        }
        if (c.patches.empty()) {
            problem = c.name + ": no patch files";
            return {};
        }
        cases.push_back(std::move(c));
    }
    return cases;
}

// Semantic form (see the top of the file).
Json canonical(const Value& v) {
    if (v.is_object()) {
        Json out = Json::object();
        for (auto it = v.begin(); it != v.end(); ++it) {
            Json c = canonical(it.value());
            if (!c.is_null()) {
                out[it.key()] = std::move(c);
            }
        }
        return out.empty() ? Json() : out;
    }
    if (v.is_array()) {
        Json out = Json::array();
        for (const auto& i : v) {
            out.push_back(canonical(i));
        }
        return out.empty() ? Json() : out;
    }
    if (v.is_null() || (v.is_string() && v.get_ref<const std::string&>().empty())) {
        return Json();
    }
    return v.is_string() ? Json(v.get<std::string>()) : Json(v.dump());
}

// Paths where two canonical values differ, at most `limit`.
void differences(const Json& a, const Json& b, const std::string& path,
                 std::vector<std::string>& out, size_t limit) {
    if (out.size() >= limit || a == b) {
        return;
    }
    if (a.is_object() && b.is_object()) {
        for (auto it = a.begin(); it != a.end(); ++it) {
            differences(it.value(), b.contains(it.key()) ? b[it.key()] : Json(),
                        path + "." + it.key(), out, limit);
        }
        for (auto it = b.begin(); it != b.end(); ++it) {
            if (!a.contains(it.key())) {
                differences(Json(), it.value(), path + "." + it.key(), out, limit);
            }
        }
        return;
    }
    out.push_back(path + ": engine " + (a.is_null() ? "(none)" : a.dump()) + ", Talos " +
                  (b.is_null() ? "(none)" : b.dump()));
}

std::map<std::string, Json> by_id(const std::vector<Value>& docs) {
    std::map<std::string, Json> out;
    for (const auto& d : docs) {
        out[ichor::render::document_id(d)] = canonical(d);
    }
    return out;
}

// Runs one case; empty when the engine agrees with Talos, else what differs.
std::string run_case(const std::string& dir, const Case& c) {
    std::vector<Value> docs;
    if (!c.config.empty()) {
        auto text = ichor::util::read_file(dir + "/" + c.config);
        if (!text.ok()) {
            return "cannot read " + c.config;
        }
        auto parsed = ichor::doc::parse_documents(*text, c.config);
        if (!parsed.ok()) {
            return "cannot parse " + c.config + ": " + parsed.error().message;
        }
        docs = std::move(*parsed);
    }
    std::string failure;
    for (const auto& p : c.patches) {
        auto text = ichor::util::read_file(dir + "/" + p);
        if (!text.ok()) {
            return "cannot read " + p;
        }
        auto st = ichor::render::apply_patch_text(docs, *text, p);
        if (!st.ok()) {
            failure = p + ": " + st.error().message;
            break;
        }
    }
    if (!c.error_equal.empty() || !c.error_contains.empty()) {
        if (failure.empty()) {
            return "the engine applied the patches; Talos fails: " + c.error_equal +
                   c.error_contains;
        }
        const std::string& msg = failure.substr(failure.find(": ") + 2);
        if (!c.error_equal.empty() ? msg != c.error_equal
                                   : msg.find(c.error_contains) == std::string::npos) {
            return "the engine fails with \"" + msg + "\"; Talos with \"" + c.error_equal +
                   c.error_contains + "\"";
        }
        return {};
    }
    if (!failure.empty()) {
        return "the engine fails: " + failure;
    }
    if (c.documents >= 0) {
        return static_cast<int>(docs.size()) == c.documents
                   ? std::string()
                   : "the engine gives " + std::to_string(docs.size()) + " documents; Talos " +
                         std::to_string(c.documents);
    }
    auto text = ichor::util::read_file(dir + "/" + c.expected);
    if (!text.ok()) {
        return "cannot read " + c.expected;
    }
    auto expected = ichor::doc::parse_documents(*text, c.expected);
    if (!expected.ok()) {
        return "cannot parse " + c.expected + ": " + expected.error().message;
    }
    auto got = by_id(docs);
    auto want = by_id(*expected);
    std::vector<std::string> diffs;
    for (const auto& [id, w] : want) {
        if (!got.contains(id)) {
            diffs.push_back(id + ": missing from the engine's result");
            continue;
        }
        differences(got[id], w, id, diffs, 8);
    }
    for (const auto& [id, g] : got) {
        if (!want.contains(id)) {
            diffs.push_back(id + ": not in Talos's result");
        }
    }
    std::string out;
    for (const auto& d : diffs) {
        out += (out.empty() ? "" : "; ") + d;
    }
    return out;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: configpatcher-cases VERSION=MACHINERY_DIR...\n";
        return 2;
    }
    int agree = 0;
    int differ = 0;
    bool broken = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const auto eq = arg.find('=');
        if (eq == std::string::npos) {
            std::cerr << "configpatcher-cases: " << arg << ": expected VERSION=DIR\n";
            return 2;
        }
        const std::string version = arg.substr(0, eq);
        const std::string dir = arg.substr(eq + 1) + "/config/configpatcher";
        auto source = ichor::util::read_file(dir + "/apply_test.go");
        if (!source.ok()) {
            std::cout << version << ": cannot read " << dir << "/apply_test.go\n";
            broken = true;
            continue;
        }
        std::string problem;
        auto cases = read_cases(*source, problem);
        if (!problem.empty() || cases.empty()) {
            std::cout << version << ": " << (problem.empty() ? "no case in apply_test.go" : problem)
                      << "\n";
            broken = true;
            continue;
        }
        for (const auto& c : cases) {
            std::string patches;
            for (const auto& p : c.patches) {
                patches += (patches.empty() ? "" : ", ") + p.substr(p.rfind('/') + 1);
            }
            std::string d = run_case(dir, c);
            if (d.empty()) {
                ++agree;
                std::cout << version << " " << c.name << " (" << patches << "): agrees\n";
            } else {
                ++differ;
                std::cout << version << " " << c.name << " (" << patches << "): DIFFERS: " << d
                          << "\n";
            }
        }
    }
    std::cout << "configpatcher cases: " << agree << " agree, " << differ << " differ\n";
    return differ > 0 || broken ? 1 : 0;
}
