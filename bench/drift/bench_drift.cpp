// bench-drift: times the drift of a 1 MB configuration and the plan of 256 Inspections
// (bench/drift/README.md). Prints one line per figure.
#include "common/drift/drift.h"
#include "common/inspection/fields.h"
#include "common/machineconfig/machineconfig.h"
#include "common/render/render.h"
#include "common/stages/plan.h"
#include "common/util/files.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

using namespace ichor;
using doc::Value;

namespace {

const std::string k_dir = std::string(ICHOR_SOURCE_DIR) + "/tests/golden/render";

std::string read_or_die(const std::string& path) {
    auto t = util::read_file(path);
    if (!t) {
        std::fprintf(stderr, "bench-drift: %s\n", t.error().message.c_str());
        std::exit(1);
    }
    return *t;
}

double median_ms(int runs, const std::function<void()>& f) {
    std::vector<double> ms;
    for (int i = 0; i < runs; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        f();
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count());
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

// A ConfigMap manifest of about `bytes` bytes.
std::string manifest(int i, size_t bytes) {
    std::string s = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big-" + std::to_string(i) +
                    "\n  namespace: kube-system\ndata:\n";
    for (int line = 0; s.size() < bytes; ++line) {
        s += "  key" + std::to_string(line) + ": \"" +
             std::string(100, static_cast<char>('a' + (line % 26))) + "\"\n";
    }
    return s;
}

} // namespace

int main(int argc, char** argv) {
    int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 15;
    auto cases = doc::parse_one(read_or_die(k_dir + "/cases.yaml"), "cases.yaml");
    auto bundle = bundle::parse(read_or_die(k_dir + "/secrets.yaml"), "secrets.yaml");
    if (!cases || !bundle) {
        std::fprintf(stderr, "bench-drift: cannot read tests/golden/render\n");
        return 1;
    }
    Value cluster_obj = (*cases)["clusters"]["prod"];
    auto cluster = render::parse_cluster(cluster_obj);
    if (!cluster) {
        return 1;
    }

    // 1 MB: the manifests come from a cluster patch, so the render has them too.
    Value manifests = Value::array();
    for (int i = 0; i < 12; ++i) {
        manifests.push_back(
            Value{{"name", "big-" + std::to_string(i)}, {"contents", manifest(i, 85 * 1024)}});
    }
    Value patch = Value::object();
    patch["metadata"]["name"] = "manifests";
    patch["spec"] =
        Value{{"cluster", "prod"},
              {"layer", "cluster"},
              {"patch", doc::to_yaml(Value{{"cluster", Value{{"inlineManifests", manifests}}}})}};
    render::Input in{&*cluster, &*bundle, "controlplane", "prod-cp-1", {"/dev/sda", "img", false},
                     "",        {patch}};
    auto rendered = render::render(in);
    if (!rendered) {
        std::fprintf(stderr, "bench-drift: %s\n", rendered.error().message.c_str());
        return 1;
    }
    auto live = machineconfig::digest_secrets(*rendered);
    size_t size = doc::to_yaml_stream(live).size();
    // As stages::plan renders again: the patched documents plus the capture.
    auto rerender = [&](const std::string& text) -> Result<std::vector<Value>> {
        std::vector<Value> docs = *rendered;
        if (auto st = render::apply_patch_text(docs, text, "capture"); !st) {
            return st.error();
        }
        return docs;
    };
    drift::Analysis last;
    double equal = median_ms(runs, [&] { last = drift::analyze(live, *rendered, {}, rerender); });
    std::printf("drift 1 MB (%zu bytes), no drift:          %7.2f ms  (%zu findings)\n", size,
                equal, last.findings.size());
    auto live_a = live;
    live_a[0]["machine"]["sysctls"] = Value{{"vm.swappiness", "1"}};
    double with_a =
        median_ms(runs, [&] { last = drift::analyze(live_a, *rendered, {}, rerender); });
    std::printf("drift 1 MB, class A captured and verified: %7.2f ms  (%zu findings)\n", with_a,
                last.findings.size());
    auto live_c = live;
    live_c[0]["cluster"]["inlineManifests"][3]["contents"] = manifest(99, 85 * 1024);
    double with_c =
        median_ms(runs, [&] { last = drift::analyze(live_c, *rendered, {}, rerender); });
    std::printf("drift 1 MB, a manifest differs (class C):  %7.2f ms  (%zu findings)\n", with_c,
                last.findings.size());
    const std::string text = doc::to_yaml_stream(live);
    double parse = median_ms(runs, [&] { (void)doc::parse_documents(text, "live"); });
    std::printf("parse the 1 MB YAML (for comparison):      %7.2f ms\n", parse);
    double render_only = median_ms(runs, [&] { (void)render::render(in); });
    std::printf("render 1 MB (for comparison):              %7.2f ms\n", render_only);

    // 256 Inspections.
    auto w = doc::parse_documents(read_or_die(k_dir + "/expected/w-1.13.yaml"), "w-1.13");
    if (!w) {
        return 1;
    }
    machineconfig::Config cfg{*w};
    Value with_facts = Value::object();
    inspection::put_facts(with_facts, machineconfig::extract_facts(cfg));
    const Value facts = *inspection::find(with_facts, inspection::field::k_facts);
    auto digested = machineconfig::digest_secrets(*w);
    doc::ResourceList base;
    for (int i = 0; i < 256; ++i) {
        std::string host = "bench-w-" + std::to_string(i + 1);
        Value v = Value::object();
        v["apiVersion"] = std::string(doc::k_adopt_api);
        v["kind"] = "Inspection";
        v["metadata"]["name"] = "127.0.1." + std::to_string(i + 1);
        v["spec"]["address"] = v["metadata"]["name"];
        v["status"]["talosVersion"] = "v1.13.9";
        v["status"]["identity"] = Value{{"uuid", "uuid-" + std::to_string(i)}, {"hostname", host}};
        v["status"]["facts"] = facts;
        v["status"]["config"] = digested;
        if (i % 2 == 1) {
            v["status"]["config"][0]["machine"]["sysctls"] = Value{{"vm.swappiness", "1"}};
        }
        v["status"]["trust"] = Value{{"verdict", "Member"}, {"cluster", "prod"}};
        base.items.push_back(std::move(v));
    }
    int writable = 0;
    double plan_ms = median_ms(std::max(1, runs / 5), [&] {
        doc::ResourceList list = base;
        auto s =
            stages::plan(list, {"prod", "ichor-system", false, &cluster_obj, &*bundle, {}, {}});
        writable = s.error ? -1 : s.done;
    });
    std::printf(
        "plan of 256 Inspections:                   %7.2f ms  (%d writable, %.2f ms each)\n",
        plan_ms, writable, plan_ms / 256);
    return 0;
}
