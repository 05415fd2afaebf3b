// The classes of drift: a rules table (data, documented in docs/drift-rules.md), not code paths.
// Pure.
#pragma once

#include "common/drift/diff.h"

#include <string>
#include <string_view>
#include <vector>

namespace ichor::drift {

enum class Class {
    A,       // captured into a TalosConfigPatch (cluster, role or machine layer)
    B,       // Ichor-owned: Ichor's value replaces the node's, with consent
    C,       // blocks the machine
    Ignored, // not drift: the node's value is taken as it is (install-time fields)
};

std::string_view class_name(Class c);

// When a rule applies.
enum class When {
    Always,
    RegistriesSet,   // the TalosCluster sets spec.registries
    RegistriesUnset, // it does not
    CniManaged,      // spec.cni.preset cilium or none: Ichor renders the CNI and kube-proxy
    CniUnmanaged,    // spec.cni.preset unmanaged: the CNI is the node's
    // Preset cilium, and every inline manifest the node has and the render has not is one that
    // delivered the Cilium Ichor took over (spec.cni.cilium.inlineManifests): the next
    // `talosctl upgrade-k8s` would apply it again, so Ichor's render leaves it out. Any other
    // inline manifest keeps the change class C.
    CiliumManifests,
    // Preset cilium, and the node's inline manifests hold a taken-over Cilium's beside others
    // (so that CiliumManifests did not match): one list cannot be both kept and removed.
    CiliumMixed,
    // The render has no install disk (the node names its disk by a v1alpha1 diskSelector only):
    // Talos refuses an install with neither (machinery v1alpha1_validation.go), so the node's
    // selector is carried.
    NoInstallDisk,
    // NoInstallDisk, and the render does not set the field at all: at 1.14 a render without a
    // disk writes no UnattendedInstallConfig, so the node's install document is carried whole.
    NoInstallDocument,
};

struct Rule {
    std::string_view path; // a fact path; matches itself and everything below it
    When when;
    Class cls;
    std::string_view code; // tags ichor.maesh.dev/code
    // For B and C: what to change; for A, a note on what the capture means (may be empty).
    // {node}, {path}, {cluster} and {ns} are replaced.
    std::string_view hint;
};

// The table, first match wins. A path no rule matches is class A, code Captured: every setting
// Ichor does not own is carried as a patch (docs/design.md, "Class A beyond the as-built list").
const std::vector<Rule>& rules();

struct Context {
    bool cluster_sets_registries = false;
    std::string cni_preset = "cilium";
    // spec.cni.cilium.inlineManifests: the names of the inline manifests that delivered the
    // Cilium Ichor took over (When::CiliumManifests).
    std::vector<std::string> cilium_manifests;
    // The node's Talos minor (14 for v1.14.1): a document kind Talos does not load at that
    // version cannot be carried (class C, UnknownDocument). 0: not known, every kind is taken.
    int talos_minor = 0;
    // Whether the render writes an install disk (analyze sets it from the rendered facts).
    bool install_disk_rendered = true;

    bool operator==(const Context&) const = default;
};

struct Verdict {
    Class cls = Class::C;
    std::string code;
    std::string hint; // the rule's template, unexpanded
};

// The class of one change. A layout move (Change::layout) is class A, Layout, before anything
// else: its values are the same on both sides. A secret change is class C (SecretDiffers) before
// any rule: a secret is either the bundle's or not the cluster's, and a digest cannot be captured.
// A document kind (documents.<Kind>...) that Talos does not load at context.talos_minor is class C
// (UnknownDocument), as is one this suite does not know at all.
Verdict classify(const Change& change, const Context& context);

} // namespace ichor::drift
