// The render against Talos's own generator: every case of tests/golden/render/cases.yaml must
// equal expected/<case>.yaml (written by tests/lab/cmd/render-oracle) semantically, or fail on
// the patch that expected/<case>.error names.
#include "common/render/render.h"
#include "common/util/files.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>

using namespace ichor;
using doc::Value;

namespace {

const std::string k_dir = std::string(ICHOR_SOURCE_DIR) + "/tests/golden/render";

std::string read(const std::string& path) {
    auto t = util::read_file(path);
    REQUIRE(t.ok());
    return *t;
}

// Semantic form: no nulls, empty strings or empty containers (Talos omits them, or writes a
// typed field's zero value: a patch that makes v1alpha1's cluster.network at contract 1.14 leaves
// `dnsDomain: ""` beside it), scalars by their text (Talos's schema types every field, so
// "65535" and 65535 are the same value of a string field).
// Key order does not matter either: the result is an unordered nlohmann::json.
nlohmann::json canonical(const Value& v) {
    if (v.is_object()) {
        nlohmann::json out = nlohmann::json::object();
        for (auto it = v.begin(); it != v.end(); ++it) {
            nlohmann::json c = canonical(it.value());
            if (!c.is_null()) {
                out[it.key()] = std::move(c);
            }
        }
        return out.empty() ? nlohmann::json() : out;
    }
    if (v.is_array()) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& i : v) {
            out.push_back(canonical(i));
        }
        return out.empty() ? nlohmann::json() : out;
    }
    if (v.is_null()) {
        return nullptr;
    }
    if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
        return s.empty() ? nlohmann::json() : nlohmann::json(s);
    }
    return v.dump();
}

std::map<std::string, nlohmann::json> by_id(const std::vector<Value>& docs) {
    std::map<std::string, nlohmann::json> out;
    for (const auto& d : docs) {
        out[render::document_id(d)] = canonical(d);
    }
    return out;
}

} // namespace

TEST_CASE("render equals Talos's generator on the golden matrix", "[render][golden]") {
    auto cases_doc = doc::parse_one(read(k_dir + "/cases.yaml"), "cases.yaml");
    REQUIRE(cases_doc.ok());
    const Value& cf = *cases_doc;
    auto b = bundle::parse(read(k_dir + "/" + cf["bundle"].get<std::string>()), "secrets.yaml");
    REQUIRE(b.ok());
    std::map<std::string, Value> patches;
    for (const auto& p : cf["patches"]) {
        patches[p["metadata"]["name"].get<std::string>()] = p;
    }
    REQUIRE(cf["cases"].size() >= 20);
    for (const auto& c : cf["cases"]) {
        const std::string name = c["name"].get<std::string>();
        SECTION(name) {
            auto cluster = render::parse_cluster(cf["clusters"][c["cluster"].get<std::string>()]);
            REQUIRE(cluster.ok());
            render::Input in;
            in.cluster = &*cluster;
            in.bundle = &*b;
            in.role = c["role"].get<std::string>();
            in.machine = c.value("machine", "");
            in.contract = c.value("contract", "");
            in.install.disk = c["install"].value("disk", "");
            in.install.image = c["install"].value("image", "");
            in.install.wipe = c["install"].value("wipe", false);
            for (const auto& n : c.value("patches", Value::array())) {
                in.patches.push_back(patches.at(n.get<std::string>()));
            }
            auto got = render::render(in);
            const std::string expected = k_dir + "/expected/" + name;
            if (std::filesystem::exists(expected + ".error")) {
                // "TalosConfigPatch NAME: Talos's reason"
                std::string want = read(expected + ".error");
                std::string patch = want.substr(0, want.find(':'));
                REQUIRE_FALSE(got.ok());
                CHECK(got.error().code == "PatchDoesNotApply");
                INFO(got.error().message);
                CHECK(got.error().message.starts_with(patch + ": "));
                continue;
            }
            REQUIRE(got.ok());
            auto want = doc::parse_documents(read(expected + ".yaml"), expected);
            REQUIRE(want.ok());
            auto g = by_id(*got);
            auto w = by_id(*want);
            for (const auto& [id, d] : w) {
                INFO("document " << id);
                REQUIRE(g.count(id) == 1);
                CHECK(g[id] == d);
                if (g[id] != d) {
                    for (auto it = d.begin(); it != d.end(); ++it) {
                        INFO("key " << it.key() << "\nwant " << it.value().dump() << "\ngot  "
                                    << (g[id].contains(it.key()) ? g[id][it.key()].dump() : "-"));
                        CHECK(g[id][it.key()] == it.value());
                    }
                }
            }
            for (const auto& [id, d] : g) {
                INFO("document " << id);
                CHECK(w.count(id) == 1);
            }
        }
    }
}

// The golden cases' bundle and their cluster "mirrors", for a test that renders one machine.
struct MirrorsCluster {
    bundle::Bundle bundle;
    render::ClusterSpec cluster;
};

MirrorsCluster mirrors_cluster() {
    auto cases_doc = doc::parse_one(read(k_dir + "/cases.yaml"), "cases.yaml");
    REQUIRE(cases_doc.ok());
    auto b = bundle::parse(read(k_dir + "/secrets.yaml"), "secrets.yaml");
    REQUIRE(b.ok());
    auto cluster = render::parse_cluster((*cases_doc)["clusters"]["mirrors"]);
    REQUIRE(cluster.ok());
    return {*b, *cluster};
}

TEST_CASE("render is deterministic and pure", "[render]") {
    const MirrorsCluster m = mirrors_cluster();
    const auto* cluster = &m.cluster;
    const auto* b = &m.bundle;
    render::Input in{cluster, b, "controlplane", "m-cp-1", {"/dev/sda", "img", false}, "", {}};
    auto a = render::render(in);
    auto c = render::render(in);
    REQUIRE(a.ok());
    REQUIRE(c.ok());
    CHECK(doc::to_yaml_stream(*a) == doc::to_yaml_stream(*c));
}

TEST_CASE("render refuses an unknown contract and a cluster without its fields", "[render]") {
    Value tc = Value::object();
    tc["metadata"]["name"] = "x";
    tc["spec"]["talosVersion"] = "v1.11.2";
    tc["spec"]["kubernetesVersion"] = "v1.33.0";
    tc["spec"]["endpoint"] = "https://x:6443";
    auto cluster = render::parse_cluster(tc);
    REQUIRE(cluster.ok());
    CHECK(cluster->version_contract == "1.11");
    bundle::Bundle b;
    render::Input in{&*cluster, &b, "worker", "", {}, "", {}};
    auto r = render::render(in);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "UnsupportedContract");
    CHECK(r.error().kind == ErrorKind::Config);

    tc["spec"].erase("endpoint");
    auto bad = render::parse_cluster(tc);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message == "TalosCluster x has no spec.endpoint");
}

TEST_CASE("patches are selected by cluster, role and machine and ordered by layer, order, name",
          "[render]") {
    auto patch = [](std::string name, std::string cluster, std::string layer, std::string target,
                    int order) {
        Value p = Value::object();
        p["metadata"]["name"] = name;
        p["spec"]["cluster"] = cluster;
        p["spec"]["layer"] = layer;
        if (layer == "role") {
            p["spec"]["role"] = target;
        } else if (layer == "machine") {
            p["spec"]["machine"] = target;
        }
        p["spec"]["order"] = order;
        return p;
    };
    std::vector<Value> ps = {
        patch("m1", "prod", "machine", "w1", 0),   patch("r-cp", "prod", "role", "controlplane", 0),
        patch("c-b", "prod", "cluster", "", 1),    patch("c-a", "prod", "cluster", "", 1),
        patch("c-0", "prod", "cluster", "", 0),    patch("r-w", "prod", "role", "worker", -1),
        patch("other", "lab-b", "cluster", "", 0), patch("m2", "prod", "machine", "w2", 0)};
    auto sel = render::select_patches(ps, "prod", "worker", "w1");
    std::vector<std::string> names;
    for (const Value* p : sel) {
        names.push_back((*p)["metadata"]["name"].get<std::string>());
    }
    CHECK(names == std::vector<std::string>{"c-0", "c-a", "c-b", "r-w", "m1"});
    // patches_for: copies of those alone, in that order, which select_patches keeps
    auto own = render::patches_for(ps, "prod", "worker", "w1");
    REQUIRE(own.size() == sel.size());
    for (std::size_t i = 0; i < own.size(); ++i) {
        CHECK(own[i] == *sel[i]);
    }
    auto again = render::select_patches(own, "prod", "worker", "w1");
    REQUIRE(again.size() == own.size());
    for (std::size_t i = 0; i < own.size(); ++i) {
        CHECK(again[i] == &own[i]);
    }
}

TEST_CASE("a PatchIndex selects what select_patches selects, in its order", "[render]") {
    auto patch = [](std::string name, Value spec) {
        Value p = Value::object();
        p["metadata"]["name"] = name;
        p["spec"] = std::move(spec);
        return p;
    };
    // Every shape the rule reads: each layer, other clusters, keys missing, empty or not text,
    // a layer the rule does not know, a role layer naming a machine, ties broken by name.
    std::vector<Value> ps = {
        patch("m-w1-b", {{"cluster", "prod"}, {"layer", "machine"}, {"machine", "w1"}}),
        patch("m-w1-a", {{"cluster", "prod"}, {"layer", "machine"}, {"machine", "w1"}}),
        patch("m-w2", {{"cluster", "prod"}, {"layer", "machine"}, {"machine", "w2"}}),
        patch("m-none", {{"cluster", "prod"}, {"layer", "machine"}}),
        patch("m-empty", {{"cluster", "prod"}, {"layer", "machine"}, {"machine", ""}}),
        patch("m-number", {{"cluster", "prod"}, {"layer", "machine"}, {"machine", 7}}),
        patch("m-other", {{"cluster", "lab"}, {"layer", "machine"}, {"machine", "w1"}}),
        patch("r-w", {{"cluster", "prod"}, {"layer", "role"}, {"role", "worker"}, {"order", 2}}),
        patch("r-cp", {{"cluster", "prod"}, {"layer", "role"}, {"role", "controlplane"}}),
        patch("r-none", {{"cluster", "prod"}, {"layer", "role"}}),
        patch("r-empty", {{"cluster", "prod"}, {"layer", "role"}, {"role", ""}}),
        patch("r-machine", {{"cluster", "prod"}, {"layer", "role"}, {"machine", "w1"}}),
        patch("r-number", {{"cluster", "prod"}, {"layer", "role"}, {"role", 7}}),
        patch("c-1", {{"cluster", "prod"}, {"layer", "cluster"}, {"order", 1}}),
        patch("c-0", {{"cluster", "prod"}, {"layer", "cluster"}, {"role", "worker"}}),
        patch("c-lab", {{"cluster", "lab"}, {"layer", "cluster"}}),
        patch("c-nameless", {{"layer", "cluster"}}),
        patch("odd", {{"cluster", "prod"}, {"layer", "node"}, {"machine", "w1"}}),
        patch("bare", Value::object()),
        patch("not-a-spec", "text"),
    };
    const render::PatchIndex index(ps);
    auto names = [](const std::vector<const Value*>& sel) {
        std::vector<std::string> out;
        for (const Value* p : sel) {
            out.push_back((*p)["metadata"]["name"].get<std::string>());
        }
        return out;
    };
    int nonempty = 0;
    for (const std::string cluster : {"prod", "lab", ""}) {
        for (const std::string role : {"worker", "controlplane", ""}) {
            for (const std::string machine : {"w1", "w2", "w3", ""}) {
                CAPTURE(cluster, role, machine);
                const auto want = render::select_patches(ps, cluster, role, machine);
                const auto got = index.select(cluster, role, machine);
                CHECK(names(got) == names(want));
                CHECK(got == want); // the list's own objects
                const auto copies = index.patches_for(cluster, role, machine);
                REQUIRE(copies.size() == want.size());
                for (std::size_t i = 0; i < copies.size(); ++i) {
                    CHECK(copies[i] == *want[i]);
                }
                nonempty += want.empty() ? 0 : 1;
            }
        }
    }
    CHECK(nonempty > 20); // the grid reaches the rule's every branch, not only empty answers
    CHECK(names(index.select("prod", "worker", "w1")) ==
          std::vector<std::string>{"c-0", "c-1", "r-w", "m-w1-a", "m-w1-b"});
    CHECK(names(index.select("prod", "", "")) ==
          std::vector<std::string>{"c-0", "c-1", "r-empty", "r-machine", "r-none", "r-number"});
}

TEST_CASE("render reads each patch text as its own, however many texts it has kept", "[render]") {
    const MirrorsCluster m = mirrors_cluster();
    const auto* cluster = &m.cluster;
    const auto* b = &m.bundle;
    auto text = [](int i) {
        return "machine:\n  kubelet:\n    extraArgs:\n      v: \"" + std::to_string(i) + "\"\n";
    };
    auto patch = [&](const std::string& t) {
        Value p = Value::object();
        p["metadata"]["name"] = "p";
        p["spec"] = Value{{"cluster", cluster->name}, {"layer", "cluster"}, {"patch", t}};
        return p;
    };
    render::Input in{cluster, b, "worker", "w", {"/dev/sda", "img", false}, "", {}};
    auto base = render::generate(in);
    REQUIRE(base.ok());
    // More texts than are kept, each asked twice, far apart and in another order: every answer is
    // that text's, as parsing it afresh gives it.
    std::vector<int> asks;
    for (int i = 0; i < 40; ++i) {
        asks.push_back(i);
    }
    for (int i = 39; i >= 0; i -= 3) {
        asks.push_back(i);
    }
    for (int i : asks) {
        CAPTURE(i);
        std::vector<Value> want = *base;
        REQUIRE(render::apply_patch_text(want, text(i), "spec.patch").ok());
        in.patches = {patch(text(i))};
        auto got = render::render(in);
        REQUIRE(got.ok());
        CHECK(doc::to_yaml_stream(*got) == doc::to_yaml_stream(want));
    }
    // A text that does not parse fails every time it is asked, never kept as an answer.
    in.patches = {patch("machine: [unclosed\n")};
    for (int n = 0; n < 2; ++n) {
        auto bad = render::render(in);
        REQUIRE_FALSE(bad.ok());
        CHECK(bad.error().code == "PatchDoesNotApply");
    }
}
