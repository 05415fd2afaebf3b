#include "common/render/patch.h"

#include "common/doc/vocabulary.h"
#include "common/machineconfig/layout.h"
#include "common/util/strings.h"

#include <algorithm>
#include <array>
#include <utility>

namespace ichor::render {

using doc::Value;

namespace {

constexpr std::string_view k_code = vocab::code::k_patch_does_not_apply;

Error patch_error(std::string message) {
    return make_error(ErrorKind::Findings, std::move(message), "", std::string(k_code));
}

std::string join_path(const std::vector<std::string>& path) {
    return util::join(path, ".");
}

std::string scalar_text(const Value& v) {
    if (v.is_string()) {
        return v.get<std::string>();
    }
    if (v.is_null()) {
        return "";
    }
    return v.dump();
}

std::string shape_name(const Value& v) {
    if (v.is_object()) {
        return "a mapping";
    }
    if (v.is_array()) {
        return "a list";
    }
    return "a scalar";
}

// Shapes Talos's schema gives some v1alpha1 fields, so that a patch of the wrong type fails even
// where the configuration does not have the field yet (Talos fails while decoding the patch).
// 'm' mapping, 'l' list.
struct Shape {
    std::string_view path;
    char shape;
};
constexpr std::array<Shape, 22> k_shapes{{
    {"machine", 'm'},
    {"cluster", 'm'},
    {"machine.sysctls", 'm'},
    {"machine.sysfs", 'm'},
    {"machine.nodeLabels", 'm'},
    {"machine.nodeAnnotations", 'm'},
    {"machine.nodeTaints", 'm'},
    {"machine.certSANs", 'l'},
    {"machine.kernel", 'm'},
    {"machine.kernel.modules", 'l'},
    {"machine.install", 'm'},
    {"machine.install.extraKernelArgs", 'l'},
    {"machine.registries", 'm'},
    {"machine.registries.mirrors", 'm'},
    {"machine.registries.config", 'm'},
    {"machine.kubelet.extraArgs", 'm'},
    {"cluster.network.podSubnets", 'l'},
    {"cluster.network.serviceSubnets", 'l'},
    {"cluster.apiServer.certSANs", 'l'},
    {"cluster.apiServer.extraArgs", 'm'},
    {"cluster.inlineManifests", 'l'},
    {"cluster.extraManifests", 'l'},
}};

// How a patch merges a list (or an unstructured mapping), where Talos does not simply append:
// one table, each row with the Go type and field of pkg/machinery (v1.14.1, config/types) that
// gives the rule. A path is a table path (below): the legacy document's own, a typed document's
// "Kind.field"; a typed document that holds a v1alpha1 field (the layout table) follows the
// v1alpha1 row. Talos's merge (config/merge) replaces a field tagged `merge:"replace"` and calls
// the Merge method of a list type that has one; every other list is appended to.
struct ListRule {
    enum class How {
        Replace,     // `merge:"replace"`: the patch's value replaces the list (or mapping)
        MergeByKey,  // a Merge method: an item with the key of an existing one merges into it
        ReplaceByKey // a Merge method that puts the patch's item in place of the existing one
    };
    std::string_view path;
    How how;
    // MergeByKey/ReplaceByKey: the item fields compared, the first one the patch's item has
    std::array<std::string_view, 2> keys = {};
    std::string_view source = {}; // the Go type and field
};
constexpr auto k_replace = ListRule::How::Replace;
constexpr auto k_merge_by = ListRule::How::MergeByKey;
constexpr auto k_replace_by = ListRule::How::ReplaceByKey;
constexpr std::array<ListRule, 21> k_list_rules{{
    {"cluster.network.podSubnets", k_replace, {}, "v1alpha1.ClusterNetworkConfig.PodSubnet"},
    {"cluster.network.serviceSubnets",
     k_replace,
     {},
     "v1alpha1.ClusterNetworkConfig.ServiceSubnet"},
    {"cluster.apiServer.auditPolicy", k_replace, {}, "v1alpha1.APIServerConfig.AuditPolicyConfig"},
    {"cluster.apiServer.admissionControl",
     k_merge_by,
     {"name"},
     "v1alpha1.APIServerConfig.AdmissionControlConfig: AdmissionPluginConfigList.Merge, by "
     "PluginName"},
    {"machine.network.interfaces",
     k_merge_by,
     {"interface", "deviceSelector"},
     "v1alpha1.NetworkConfig.NetworkInterfaces: NetworkDeviceList.Merge, by DeviceInterface, else "
     "DeviceSelector"},
    {"machine.network.interfaces.vlans",
     k_merge_by,
     {"vlanId"},
     "v1alpha1.Device.DeviceVlans: VlanList.Merge, by VlanID"},
    {"KubeNetworkConfig.podSubnets",
     k_replace,
     {},
     "k8s.KubeNetworkConfigV1Alpha1.NetworkPodSubnets"},
    {"KubeNetworkConfig.serviceSubnets",
     k_replace,
     {},
     "k8s.KubeNetworkConfigV1Alpha1.NetworkServiceSubnets"},
    {"KubeAuditPolicyConfig.configuration",
     k_replace,
     {},
     "k8s.KubeAuditPolicyConfigV1Alpha1.AuditConfig"},
    {"KubeAuthenticationConfig.configuration",
     k_replace,
     {},
     "k8s.KubeAuthenticationConfigV1Alpha1.AuthConfig"},
    {"KubeCredentialProviderConfig.configuration",
     k_replace,
     {},
     "k8s.KubeCredentialProviderConfigV1Alpha1.CredentialProviderConfig"},
    {"KubeStaticPodConfig.pod", k_replace, {}, "k8s.KubeStaticPodConfigV1Alpha1.PodSpec"},
    {"ResolverConfig.searchDomains.domains",
     k_replace,
     {},
     "network.SearchDomainsConfig.SearchDomains"},
    {"BGPInstanceConfig.advertise",
     k_replace,
     {},
     "network.BGPInstanceConfigV1Alpha1.BGPAdvertise"},
    {"BGPInstanceConfig.importRoutes",
     k_replace,
     {},
     "network.BGPInstanceConfigV1Alpha1.BGPImportRoutes"},
    {"BGPInstanceConfig.neighbors",
     k_replace,
     {},
     "network.BGPInstanceConfigV1Alpha1.BGPNeighborConfigs"},
    {"NetworkRuleConfig.ingress", k_replace, {}, "network.RuleConfigV1Alpha1.Ingress"},
    {"NetworkRuleConfig.portSelector.ports", k_replace, {}, "network.RulePortSelector.Ports"},
    {"CRIBaseRuntimeSpecConfig.overrides",
     k_replace,
     {},
     "cri.CRIBaseRuntimeSpecConfigV1Alpha1.OverridesConfig"},
    {"ExtensionServiceConfig.configFiles",
     k_merge_by,
     {"mountPath"},
     "extensions.ServiceConfigV1Alpha1.ServiceConfigFiles: ConfigFileList.Merge, by "
     "ConfigFileMountPath"},
    {"ImageVerificationConfig.rules",
     k_replace_by,
     {"image"},
     "security.ImageVerificationConfigV1Alpha1.ConfigRules: ImageVerificationRules.Merge, by "
     "RuleImagePattern"},
}};

// The path used for the tables: the legacy document's own paths, a typed document's as
// "Kind.field"; list indexes are dropped.
std::string table_path(const std::string& kind_prefix, const std::vector<std::string>& path) {
    std::string out = kind_prefix;
    for (const auto& p : path) {
        if (p.starts_with('[')) {
            continue;
        }
        if (!out.empty()) {
            out += '.';
        }
        out += p;
    }
    return out;
}

// --- $patch: delete, as Talos's loader finds them -------------------------------------------

bool is_delete_marker(const std::string& key, const Value& v) {
    return key == "$patch" && v.is_string() && v.get_ref<const std::string&>() == "delete";
}

struct Extractor {
    const Value* root = nullptr; // the patch document, for apiVersion/kind/name
    std::vector<DeleteSelector> found;
    std::string error;

    enum class Parent { Document, Mapping, Sequence };

    std::string root_value(const char* key) const {
        if (root == nullptr || !root->is_object() || !root->contains(key)) {
            return {};
        }
        return scalar_text((*root)[key]);
    }

    bool selector(const std::vector<std::string>& path, std::string key, std::string value) {
        DeleteSelector s;
        s.api_version = root_value("apiVersion");
        s.kind = root_value("kind");
        if (s.kind.empty() && s.api_version.empty()) {
            if (path.empty()) {
                error = "$patch: delete of a whole document needs its apiVersion and kind";
                return false;
            }
            s.kind = "v1alpha1";
        } else if (s.kind.empty() || s.api_version.empty()) {
            error = "kind and apiVersion must be both set for path " + join_path(path);
            return false;
        }
        s.name = root_value("name");
        s.path = path;
        s.key = std::move(key);
        s.value = std::move(value);
        found.push_back(std::move(s));
        return true;
    }

    // Returns {continue, delete this node}.
    std::pair<bool, bool> process(Parent parent, Value& v, std::vector<std::string>& path) {
        if (v.is_object()) {
            for (auto it = v.begin(); it != v.end(); ++it) {
                if (is_delete_marker(it.key(), it.value())) {
                    return {on_delete(parent, v, path), true};
                }
            }
            std::vector<std::string> erase;
            for (auto it = v.begin(); it != v.end(); ++it) {
                path.push_back(it.key());
                auto [cont, del] = process(Parent::Mapping, it.value(), path);
                path.pop_back();
                if (!cont) {
                    return {false, del};
                }
                if (del) {
                    erase.push_back(it.key());
                }
            }
            for (const auto& k : erase) {
                v.erase(k);
            }
            if (!erase.empty() && v.empty()) {
                return {true, true};
            }
        } else if (v.is_array()) {
            Value kept = Value::array();
            bool any = false;
            for (size_t i = 0; i < v.size(); ++i) {
                path.push_back("[" + std::to_string(kept.size()) + "]");
                auto [cont, del] = process(Parent::Sequence, v[i], path);
                path.pop_back();
                if (!cont) {
                    return {false, del};
                }
                if (del) {
                    any = true;
                } else {
                    kept.push_back(std::move(v[i]));
                }
            }
            v = std::move(kept);
            if (any && v.empty()) {
                return {true, true};
            }
        }
        return {true, false};
    }

    bool on_delete(Parent parent, const Value& node, const std::vector<std::string>& path) {
        if (parent == Parent::Sequence) {
            for (auto it = node.begin(); it != node.end(); ++it) {
                if (is_delete_marker(it.key(), it.value())) {
                    continue;
                }
                return selector(path, it.key(), scalar_text(it.value()));
            }
            error = "no key:val found in sequence node for path " + join_path(path);
            return false;
        }
        for (const auto& p : path) {
            if (p.starts_with('[')) {
                error = "cannot delete an inner key in '" + join_path(path) + "'";
                return false;
            }
        }
        return selector(path, {}, {});
    }
};

// Talos drops a patch document that only names itself once its deletes are taken out.
bool only_identity(const Value& d) {
    for (auto it = d.begin(); it != d.end(); ++it) {
        const std::string& k = it.key();
        if (k != "version" && k != "kind" && k != "name") {
            return false;
        }
    }
    return true;
}

// What Talos's decoding changes in a value it reads: an inline manifest's contents lose their
// leading tabs and newlines (v1alpha1.ClusterInlineManifests.UnmarshalYAML trims
// "\t\n\v\f\r"; KubeInlineManifestConfig keeps its manifest as written).
void trim_inline_manifests(Value& d) {
    if (d.contains("kind") || !d.contains("cluster") || !d["cluster"].is_object()) {
        return;
    }
    Value& c = d["cluster"];
    if (!c.contains("inlineManifests") || !c["inlineManifests"].is_array()) {
        return;
    }
    for (auto& m : c["inlineManifests"]) {
        if (m.is_object() && m.contains("contents") && m["contents"].is_string()) {
            auto& text = m["contents"].get_ref<std::string&>();
            text.erase(0, text.find_first_not_of("\t\n\v\f\r"));
        }
    }
}

bool is_json6902(const Value& v) {
    if (!v.is_array()) {
        return false;
    }
    for (const auto& op : v) {
        if (!op.is_object() || !op.contains("op")) {
            return false;
        }
    }
    return true;
}

// --- merge -------------------------------------------------------------------------------------

bool is_zero_scalar(const Value& v) {
    return (v.is_string() && v.get_ref<const std::string&>().empty()) || (v.is_number() && v == 0);
}

const ListRule* list_rule(std::string_view p) {
    for (const auto& r : k_list_rules) {
        if (r.path == p) {
            return &r;
        }
    }
    return nullptr;
}

// The rule of a table path; a typed document's field that the layout table places in v1alpha1
// ("KubeNetworkConfig.podSubnets") follows its v1alpha1 field's rule.
const ListRule* rule_of(std::string_view p) {
    if (const ListRule* r = list_rule(p); r != nullptr) {
        return r;
    }
    auto dot = p.find('.');
    if (dot == std::string_view::npos) {
        return nullptr;
    }
    std::string home = machineconfig::layout::v1alpha1_of(p.substr(0, dot), p.substr(dot + 1));
    return home.empty() ? nullptr : list_rule(home);
}

bool replaced(std::string_view p) {
    const ListRule* r = rule_of(p);
    return r != nullptr && r->how == ListRule::How::Replace;
}

const ListRule* keyed_list(std::string_view p) {
    const ListRule* r = rule_of(p);
    return r != nullptr && r->how != ListRule::How::Replace ? r : nullptr;
}

struct Merger {
    std::string prefix; // "" for the legacy document, "Kind" for a typed one

    Status check_shape(const std::vector<std::string>& path, const Value& r) const {
        if (!prefix.empty() || r.is_null()) {
            return ok_status();
        }
        std::string p = table_path({}, path);
        for (const auto& s : k_shapes) {
            if (s.path == p) {
                bool good = s.shape == 'm' ? r.is_object() : r.is_array();
                if (!good) {
                    return patch_error(p + ": " + shape_name(r) + " where the configuration has " +
                                       (s.shape == 'm' ? "a mapping" : "a list"));
                }
            }
        }
        return ok_status();
    }

    Status check_tree(std::vector<std::string>& path, const Value& r) const {
        if (auto st = check_shape(path, r); !st) {
            return st;
        }
        if (r.is_object()) {
            for (auto it = r.begin(); it != r.end(); ++it) {
                path.push_back(it.key());
                auto st = check_tree(path, it.value());
                path.pop_back();
                if (!st) {
                    return st;
                }
            }
        }
        return ok_status();
    }

    Status merge(Value& l, const Value& r, std::vector<std::string>& path) const {
        if (r.is_null()) {
            return ok_status();
        }
        if (l.is_null()) {
            if (auto st = check_tree(path, r); !st) {
                return st;
            }
            l = r;
            return ok_status();
        }
        const std::string tp = table_path(prefix, path);
        if (l.is_object() != r.is_object() || l.is_array() != r.is_array()) {
            return patch_error((prefix.empty() ? "" : prefix + ": ") + join_path(path) + ": " +
                               shape_name(r) + " where the configuration has " + shape_name(l));
        }
        if (r.is_object()) {
            bool args = !path.empty() && path.back() == "extraArgs";
            if (replaced(tp)) {
                l = r;
                return ok_status();
            }
            for (auto it = r.begin(); it != r.end(); ++it) {
                if (args || !l.contains(it.key()) || l[it.key()].is_null()) {
                    path.push_back(it.key());
                    auto st = check_tree(path, it.value());
                    path.pop_back();
                    if (!st) {
                        return st;
                    }
                    l[it.key()] = it.value();
                    continue;
                }
                path.push_back(it.key());
                auto st = merge(l[it.key()], it.value(), path);
                path.pop_back();
                if (!st) {
                    return st;
                }
            }
            return ok_status();
        }
        if (r.is_array()) {
            if (replaced(tp)) {
                l = r;
                return ok_status();
            }
            if (const ListRule* kl = keyed_list(tp); kl != nullptr) {
                return merge_keyed(l, r, *kl, path);
            }
            for (const auto& item : r) {
                l.push_back(item);
            }
            return ok_status();
        }
        if (!is_zero_scalar(r) || r.is_boolean()) {
            l = r;
        }
        return ok_status();
    }

    Status merge_keyed(Value& l, const Value& r, const ListRule& kl,
                       std::vector<std::string>& path) const {
        for (const auto& item : r) {
            Value* existing = nullptr;
            std::string key;
            for (auto k : kl.keys) {
                if (!k.empty() && item.is_object() && item.contains(std::string(k))) {
                    key = std::string(k);
                    break;
                }
            }
            if (!key.empty()) {
                for (auto& li : l) {
                    if (li.is_object() && li.contains(key) && li[key] == item[key]) {
                        existing = &li;
                        break;
                    }
                }
            }
            if (existing == nullptr) {
                l.push_back(item);
                continue;
            }
            if (kl.how == ListRule::How::ReplaceByKey) {
                *existing = item;
                continue;
            }
            path.push_back("[" + scalar_text(item[key]) + "]");
            auto st = merge(*existing, item, path);
            path.pop_back();
            if (!st) {
                return st;
            }
        }
        return ok_status();
    }
};

// --- delete ----------------------------------------------------------------------------------

Status delete_path(Value& v, const DeleteSelector& s, size_t i) {
    const std::string& seg = s.path[i];
    bool last = i + 1 == s.path.size();
    auto failed = [&] {
        return patch_error("patch delete: path '" + join_path(s.path) + "' in document '" +
                           s.api_version + "/" + s.kind + "': failed to delete path '" +
                           join_path(s.path) + "': lookup failed");
    };
    if (v.is_array()) {
        if (!last) {
            return patch_error("patch delete: path '" + join_path(s.path) +
                               "': searching for complex paths in slices is not supported");
        }
        for (auto it = v.begin(); it != v.end(); ++it) {
            if (it->is_object() && it->contains(s.key) && scalar_text((*it)[s.key]) == s.value) {
                v.erase(it);
                return ok_status();
            }
        }
        return failed();
    }
    if (!v.is_object()) {
        return failed();
    }
    if (!v.contains(seg)) {
        // Talos zeroes a known field whatever its value; a schema-less tree cannot tell a zero
        // field from an unknown one, so a missing last key is taken as already deleted.
        return last && s.key.empty() ? ok_status() : failed();
    }
    if (last && s.key.empty()) {
        v.erase(seg);
        return ok_status();
    }
    return delete_path(v[seg], s, i + 1);
}

std::string selector_id(const DeleteSelector& s) {
    if (s.api_version.empty() && s.kind == "v1alpha1") {
        return "v1alpha1";
    }
    return s.api_version + "/" + s.kind + (s.name.empty() ? "" : "/" + s.name);
}

Status apply_strategic(std::vector<Value>& docs, const Patch& patch) {
    for (const auto& step : patch.steps) {
        const std::string id =
            step.is_delete ? selector_id(step.selector) : document_id(step.document);
        auto it = std::find_if(docs.begin(), docs.end(),
                               [&](const Value& d) { return document_id(d) == id; });
        if (step.is_delete) {
            if (it == docs.end()) {
                continue; // Talos skips a delete of a document the configuration does not have
            }
            if (step.selector.path.empty()) {
                docs.erase(it);
                continue;
            }
            if (auto st = delete_path(*it, step.selector, 0); !st) {
                return st;
            }
            continue;
        }
        if (it == docs.end()) {
            docs.push_back(step.document);
            continue;
        }
        Merger m{id == "v1alpha1" ? std::string() : step.document.value("kind", "")};
        std::vector<std::string> path;
        if (auto st = m.merge(*it, step.document, path); !st) {
            return st;
        }
    }
    return ok_status();
}

Status apply_json6902(std::vector<Value>& docs, const Value& ops) {
    if (docs.size() != 1) {
        return patch_error(
            "JSON6902 patches are not supported for multi-document machine configuration");
    }
    try {
        docs[0] = docs[0].patch(ops);
    } catch (const nlohmann::json::exception& e) {
        // nlohmann reports RFC 6902 failures by exception; they become the patch's error here.
        return patch_error(
            std::string("failure applying rfc6902 patches to talos machine config: ") + e.what());
    }
    return ok_status();
}

} // namespace

std::string document_id(const Value& d) {
    if (!d.is_object() || !d.contains("kind")) {
        return "v1alpha1";
    }
    std::string id = scalar_text(d.value("apiVersion", Value(""))) + "/" + scalar_text(d["kind"]);
    if (d.contains("name")) {
        id += "/" + scalar_text(d["name"]);
    }
    return id;
}

Result<Patch> parse_patch(std::string_view text, std::string_view source) {
    auto docs = doc::parse_documents(text, source);
    if (!docs) {
        if (docs.error().code == vocab::code::k_input_limit) {
            Error e = docs.error(); // the limit's code and hint; a finding, as any patch error
            e.kind = ErrorKind::Findings;
            return e;
        }
        return patch_error(docs.error().message);
    }
    Patch p;
    if (docs->size() == 1 && (*docs)[0].is_array()) {
        if (!is_json6902((*docs)[0])) {
            return patch_error(std::string(source) + ": a list that is not a JSON 6902 patch");
        }
        p.kind = Patch::Kind::Json6902;
        p.operations = std::move((*docs)[0]);
        return p;
    }
    for (auto& d : *docs) {
        if (!d.is_object()) {
            return patch_error(std::string(source) + ": expected a YAML document (a mapping)");
        }
        Extractor ex;
        Value root_copy = d; // apiVersion/kind/name as written, while `d` is being cut
        ex.root = &root_copy;
        std::vector<std::string> path;
        auto [cont, del] = ex.process(Extractor::Parent::Document, d, path);
        (void)cont;
        if (!ex.error.empty()) {
            return patch_error(std::string(source) + ": $patch: delete: " + ex.error);
        }
        for (auto& s : ex.found) {
            Patch::Step step;
            step.is_delete = true;
            step.selector = std::move(s);
            p.steps.push_back(std::move(step));
        }
        if (del || only_identity(d)) {
            continue;
        }
        // One patch may name a document more than once (delete a field, set it, set another):
        // Talos (machinery v1.14) loads patches without the duplicate check and applies the
        // documents in order.
        trim_inline_manifests(d);
        Patch::Step step;
        step.document = std::move(d);
        p.steps.push_back(std::move(step));
    }
    return p;
}

Status apply_patch(std::vector<Value>& documents, const Patch& patch) {
    if (patch.kind == Patch::Kind::Json6902) {
        return apply_json6902(documents, patch.operations);
    }
    return apply_strategic(documents, patch);
}

Status apply_patch_text(std::vector<Value>& documents, std::string_view text,
                        std::string_view source) {
    auto p = parse_patch(text, source);
    if (!p) {
        return p.error();
    }
    return apply_patch(documents, *p);
}

} // namespace ichor::render
