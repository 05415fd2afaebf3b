#include "common/stages/hold.h"

#include "common/doc/objects.h"
#include "common/doc/vocabulary.h"
#include "common/inspection/view.h"
#include "common/machineconfig/machineconfig.h"
#include "common/stages/credentials.h"
#include "common/stages/hold_parts.h"
#include "common/stages/plan.h"
#include "common/stages/trust.h"
#include "common/talos/address.h"
#include "common/talos/client.h"
#include "common/talos/loop.h"
#include "common/talos/reach.h"
#include "common/util/files.h"
#include "common/util/strings.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <thread>

namespace ichor::stages {

using doc::Value;
using objects::ClusterView;
using objects::MachineView;
using objects::PatchView;

using namespace hold_parts;

namespace hold_parts {

// The bundle Secret a whole-cluster plan carries: metadata only, its data comes from the bundle.
bool is_bundle_secret(const Value& item) {
    return item.value("kind", "") == "Secret" && item.value("apiVersion", "") == "v1" &&
           !is_credentials_secret(item) && doc::find_path(item, "metadata.labels") != nullptr &&
           item["metadata"]["labels"].contains(std::string(vocab::k_label_cluster));
}

bool is_created_kind(const Value& item) {
    std::string kind = item.value("kind", "");
    return (item.value("apiVersion", "") == doc::k_ichor_api &&
            (kind == "TalosMachine" || kind == "TalosConfigPatch" || kind == "TalosCluster")) ||
           is_bundle_secret(item) || is_credentials_secret(item);
}

std::string plural(const Value& item) {
    const std::string kind = item.value("kind", "");
    return kind == "TalosMachine"   ? "talosmachines"
           : kind == "TalosCluster" ? "talosclusters"
           : kind == "Secret"       ? "secrets"
                                    : "talosconfigpatches";
}

std::string name_of(const Value& v) {
    return doc::get_string(v, "metadata.name");
}

Value without_suite_annotations(Value item) {
    if (item.contains("metadata") && item["metadata"].contains("annotations")) {
        auto& a = item["metadata"]["annotations"];
        for (auto k : {vocab::k_annotation_plan_digest, vocab::k_annotation_applied_at,
                       vocab::k_annotation_consented_drift}) {
            a.erase(std::string(k));
        }
    }
    return item;
}

bool is_class(const Value& r, std::string_view cls) {
    return r.contains("tags") && r["tags"].value(std::string(doc::k_tag_class), "") == cls;
}

std::string annotation(const Value& obj, std::string_view key) {
    const Value* a = doc::find_path(obj, "metadata.annotations");
    if (a == nullptr || !a->is_object() || !a->contains(std::string(key))) {
        return {};
    }
    const Value& v = (*a)[std::string(key)];
    return v.is_string() ? v.get<std::string>() : v.dump();
}

bool has_annotation(const Value& obj, std::string_view key) {
    const Value* a = doc::find_path(obj, "metadata.annotations");
    return a != nullptr && a->is_object() && a->contains(std::string(key));
}

// The TalosMachines of `cluster` and every TalosConfigPatch of the namespace: what release and
// abort start from.
Result<std::pair<std::vector<Value>, std::vector<Value>>>
cluster_objects(IchorObjects& objects, const std::string& cluster) {
    auto machines = objects.list("talosmachines", vocab::cluster_selector(cluster));
    if (!machines) {
        return machines.error();
    }
    auto patches = objects.list("talosconfigpatches");
    if (!patches) {
        return patches.error();
    }
    return std::make_pair(std::move(*machines), std::move(*patches));
}

// A step for the user, when there is someone to tell.
void step(Reporter* report, std::string_view line) {
    if (report != nullptr) {
        report->step(line);
    }
}

} // namespace hold_parts

std::vector<std::string> consent_lines(const doc::ResourceList& plan) {
    std::vector<std::string> out;
    for (const auto& r : plan.results) {
        if (!is_class(r, "B")) {
            continue;
        }
        const Value* f = doc::find_path(r, "tags.field");
        if (f == nullptr) {
            f = doc::find_path(r, "field");
        }
        std::string node = r["tags"].value(std::string(doc::k_tag_node), "");
        if (f != nullptr) {
            out.push_back(node + ": " + f->value("path", "") + ": " +
                          f->value("currentValue", Value()).dump() + " -> " +
                          f->value("proposedValue", Value()).dump());
        } else {
            out.push_back(r.value("message", ""));
        }
    }
    return out;
}

namespace hold_parts {

// The nodes a plan refused or blocked: each named by an error result, none with a TalosMachine in
// the plan (ADR 0128: class C blocks that machine, not the run). `whole` counts the errors that
// stop every machine: one that names no node (the plan's own refusal), or one that names a node the
// plan still creates a machine for.
Stopped stopped_nodes(const doc::ResourceList& plan) {
    std::set<std::string> planned;
    for (const auto& item : plan.items) {
        if (is_created_kind(item) && item.value("kind", "") == "TalosMachine") {
            std::string a = MachineView(item).address();
            planned.insert(a);
            if (auto host = talos::parse_address(a); host) {
                planned.insert(host->text);
            }
        }
    }
    Stopped s;
    for (const auto& r : plan.results) {
        if (r.value("severity", "") != "error") {
            continue;
        }
        const Value* tags = doc::find_path(r, "tags");
        std::string node = tags != nullptr && tags->is_object()
                               ? tags->value(std::string(doc::k_tag_node), "")
                               : std::string();
        if (node.empty() || planned.count(node) != 0) {
            ++s.whole;
        } else {
            s.nodes.insert(node);
        }
    }
    return s;
}

} // namespace hold_parts

Status check_plan_writable(const doc::ResourceList& plan) {
    const int errors = stopped_nodes(plan).whole;
    if (errors > 0) {
        return make_error(
            ErrorKind::Findings,
            "the plan carries " + std::to_string(errors) +
                " error result(s) (refused or blocked machines); " +
                std::string(vocab::k_nothing_written),
            "read them with: kubectl ichor inspect -f PLAN -o table; fix them and plan again",
            vocab::code::k_plan_has_errors);
    }
    for (const auto& item : plan.items) {
        if (is_created_kind(item)) {
            return ok_status();
        }
    }
    return make_error(ErrorKind::Findings,
                      "the plan creates nothing; " + std::string(vocab::k_nothing_written), "",
                      std::string(vocab::code::k_nothing_to_adopt));
}

std::string plan_digest(const doc::ResourceList& plan) {
    Value objs = Value::array();
    for (const auto& item : plan.items) {
        if (is_created_kind(item)) {
            objs.push_back(without_suite_annotations(item));
        }
    }
    return util::sha256_digest(objs.dump());
}

namespace {

// Sets allow-delete, then deletes that incarnation of the object; one result either way.
void remove_object(IchorObjects& objects, const std::string& plural_name, const Value& obj,
                   doc::ResourceList& list, Outcome& out) {
    Value allow = {
        {"metadata", {{"annotations", {{std::string(vocab::k_annotation_allow_delete), "true"}}}}}};
    auto a = plural_name == "secrets" ? Result<Value>(Value())
                                      : objects.merge_patch(plural_name, name_of(obj), allow);
    auto d = a ? objects.remove(plural_name, name_of(obj), doc::get_string(obj, "metadata.uid"))
               : Result<Value>(a.error());
    if (!d) {
        ++out.stopped;
        list.add_result(doc::Severity::Error, "removing " + name_of(obj) + ": " + d.error().message,
                        d.error().code, &obj);
    } else {
        ++out.done;
        list.add_result(doc::Severity::Info,
                        "removed " + obj.value("kind", "") + " " + name_of(obj),
                        vocab::code::k_removed, &obj);
    }
}

// The Secrets of a removed patch's credentials that an adoption wrote (they carry its plan
// digest); a Secret the person made and named in spec.secretValues stays.
void remove_credentials(IchorObjects& objects, const Value& patch, doc::ResourceList& list,
                        Outcome& out) {
    std::set<std::string> names;
    if (const Value* sv = PatchView(patch).secret_values(); sv != nullptr) {
        for (const auto& e : *sv) {
            names.insert(doc::get_string(e, "secretRef.name"));
        }
    }
    for (const auto& n : names) {
        if (auto sec = objects.get("secrets", objects.ns(), n);
            sec && annotation(*sec, vocab::k_annotation_plan_digest) ==
                       annotation(patch, vocab::k_annotation_plan_digest)) {
            remove_object(objects, "secrets", *sec, list, out);
        }
    }
}

Outcome abort_held(doc::ResourceList& list, const AbortOptions& o) {
    IchorObjects& objects = *o.objects;
    auto read = cluster_objects(objects, o.cluster);
    if (!read) {
        return failed(read.error());
    }
    auto& [machines, patches] = *read;
    list = doc::ResourceList{};
    // A TalosCluster that a whole-cluster adoption wrote goes too, with its bundle Secret and
    // every patch of the adoption, while all its machines are still held.
    Result<Value> made = objects.get("talosclusters", objects.ns(), o.cluster);
    const bool whole =
        o.machines.empty() && made && has_annotation(*made, vocab::k_annotation_plan_digest);
    if (whole) {
        std::vector<std::string> released;
        for (const auto& m : machines) {
            if (!has_annotation(m, vocab::k_annotation_hold_apply)) {
                released.push_back(name_of(m));
            }
        }
        if (!released.empty()) {
            return failed(make_error(
                ErrorKind::Findings,
                "the adoption of cluster " + o.cluster +
                    " is past hold abort: " + util::join(released, ", ") +
                    " released (Ichor configures it now); nothing was removed",
                "hold abort removes an adoption only while every machine is held; remove "
                "machines one by one with kubectl ichor hold abort --cluster " +
                    o.cluster + " --machine NAME",
                vocab::code::k_already_released));
        }
    }
    Outcome out;
    for (const auto& m : machines) {
        std::string name = name_of(m);
        bool chosen = o.machines.empty() ||
                      std::find(o.machines.begin(), o.machines.end(), name) != o.machines.end();
        if (!chosen || !has_annotation(m, vocab::k_annotation_hold_apply) ||
            !has_annotation(m, vocab::k_annotation_plan_digest)) {
            continue;
        }
        for (const auto& p : patches) {
            if (PatchView(p).machine() == name &&
                has_annotation(p, vocab::k_annotation_plan_digest)) {
                remove_object(objects, "talosconfigpatches", p, list, out);
                remove_credentials(objects, p, list, out);
            }
        }
        remove_object(objects, "talosmachines", m, list, out);
    }
    if (!whole || out.stopped > 0) {
        return out;
    }
    const std::string digest = annotation(*made, vocab::k_annotation_plan_digest);
    for (const auto& p : patches) {
        if (PatchView(p).cluster() == o.cluster &&
            PatchView(p).layer() != objects::k_layer_machine &&
            annotation(p, vocab::k_annotation_plan_digest) == digest) {
            remove_object(objects, "talosconfigpatches", p, list, out);
            remove_credentials(objects, p, list, out);
        }
    }
    remove_object(objects, "talosclusters", *made, list, out);
    const std::string secret = ClusterView(*made).bundle_secret();
    if (auto sec = objects.get("secrets", objects.ns(), secret);
        sec && annotation(*sec, vocab::k_annotation_plan_digest) == digest) {
        remove_object(objects, "secrets", *sec, list, out);
    }
    return out;
}

} // namespace

Outcome hold_abort(doc::ResourceList& list, const AbortOptions& o) {
    return run_stage("hold-abort", list, [&] { return abort_held(list, o); });
}

} // namespace ichor::stages
