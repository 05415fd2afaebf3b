// Helpers of the common/cni tests: the fixture cluster, Helm release records built the way Helm's
// storage writes them (JSON, gzip, base64, and the API's base64), Nodes and control planes.
#pragma once

#include "common/cni/detect.h"
#include "common/doc/value.h"
#include "common/machineconfig/machineconfig.h"
#include "common/util/files.h"
#include "common/util/strings.h"

#include <catch2/catch.hpp>
#include <zlib.h>

#include <string>

namespace cni_test {

using ichor::doc::Value;

inline Value yaml(const std::string& text) {
    auto v = ichor::doc::parse_one(text, "test");
    REQUIRE(v.ok());
    return *v;
}

inline std::string gzip(const std::string& data) {
    z_stream zs{};
    REQUIRE(deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 9,
                         Z_DEFAULT_STRATEGY) == Z_OK);
    std::string out(deflateBound(&zs, data.size()) + 32, '\0');
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    zs.avail_in = static_cast<uInt>(data.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
    out.resize(zs.total_out);
    deflateEnd(&zs);
    return out;
}

// A release as Helm's JSON has it.
inline Value release_json(const std::string& name, int revision, const std::string& status,
                          const std::string& chart, const std::string& version,
                          const Value& config) {
    return Value{{"name", name},
                 {"namespace", "kube-system"},
                 {"version", revision},
                 {"info", {{"status", status}}},
                 {"chart",
                  {{"metadata", {{"name", chart}, {"version", version}, {"appVersion", version}}},
                   {"values", {{"ipam", {{"mode", "cluster-pool"}}}}}}},
                 {"config", config},
                 {"manifest", "---\n# Source: cilium/templates/cilium-configmap.yaml\n"}};
}

// The Secret Helm's storage driver writes for `release`, as the API returns it.
inline Value release_secret(const Value& release, const std::string& encoded_override = {}) {
    std::string helm = encoded_override.empty() ? ichor::util::base64_encode(gzip(release.dump()))
                                                : encoded_override;
    std::string name = "sh.helm.release.v1." + release.value("name", "") + ".v" +
                       std::to_string(release.value("version", 0));
    return Value{{"apiVersion", "v1"},
                 {"kind", "Secret"},
                 {"type", "helm.sh/release.v1"},
                 {"metadata",
                  {{"name", name},
                   {"namespace", "kube-system"},
                   {"labels",
                    {{"owner", "helm"},
                     {"name", release.value("name", "")},
                     {"status", release["info"].value("status", "")}}}}},
                 {"data", {{"release", ichor::util::base64_encode(helm)}}}};
}

inline Value node(const std::string& name, const std::string& ready,
                  const std::string& message = {}) {
    return Value{{"apiVersion", "v1"},
                 {"kind", "Node"},
                 {"metadata", {{"name", name}}},
                 {"status",
                  {{"conditions",
                    Value::array({{{"type", "Ready"},
                                   {"status", ready},
                                   {"reason", ready == "True" ? "KubeletReady" : "KubeletNotReady"},
                                   {"message", message}}})}}}};
}

inline constexpr const char* k_no_network =
    "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady "
    "message:Network plugin returns error: cni plugin not initialized";

inline ichor::cni::ControlPlane plane(const std::string& node, const std::string& config_yaml) {
    auto cfg = ichor::machineconfig::parse(config_yaml, node);
    REQUIRE(cfg.ok());
    return {node, *cfg, false};
}

// Sorts objects of a YAML stream into a cluster listing by kind.
inline void add_objects(ichor::cni::ClusterObjects& o, const std::string& text) {
    auto docs = ichor::doc::parse_documents(text, "objects");
    REQUIRE(docs.ok());
    for (auto& d : *docs) {
        std::string kind = d.value("kind", "");
        if (kind == "DaemonSet") {
            o.daemonsets.push_back(d);
        } else if (kind == "Deployment") {
            o.deployments.push_back(d);
        } else if (kind == "ConfigMap") {
            o.configmaps.push_back(d);
        } else if (kind == "Secret") {
            o.secrets.push_back(d);
        } else if (kind == "Node") {
            o.nodes.push_back(d);
        }
    }
}

// The Talos guide's Cilium (tests/unit/data/cni/cilium-guide.yaml) and two Ready nodes.
inline ichor::cni::ClusterObjects guide_cluster() {
    ichor::cni::ClusterObjects o;
    auto text = ichor::util::read_file(std::string(ICHOR_SOURCE_DIR) +
                                       "/tests/unit/data/cni/cilium-guide.yaml");
    REQUIRE(text.ok());
    add_objects(o, *text);
    o.nodes = {node("cp-1", "True"), node("w-1", "True")};
    return o;
}

inline constexpr const char* k_cp_none = R"(version: v1alpha1
machine: {type: controlplane}
cluster:
  network: {cni: {name: none}}
  proxy: {disabled: true}
)";

} // namespace cni_test

namespace cni_test {

// tests/unit/data/cni/lab-cilium-helm.json: what the lab's apiserver held after
// `helm-record --record --objects --guide --values V` twice, V setting hubble.relay.enabled (a
// kubectl List of the release Secrets and the Cilium objects).
inline ichor::cni::ClusterObjects lab_helm_cluster() {
    auto text = ichor::util::read_file(std::string(ICHOR_SOURCE_DIR) +
                                       "/tests/unit/data/cni/lab-cilium-helm.json");
    REQUIRE(text.ok());
    auto list = ichor::doc::parse_one(*text, "lab-cilium-helm.json");
    REQUIRE(list.ok());
    ichor::cni::ClusterObjects o;
    add_objects(o, ichor::doc::to_yaml_stream(
                       std::vector<Value>((*list)["items"].begin(), (*list)["items"].end())));
    return o;
}

} // namespace cni_test
