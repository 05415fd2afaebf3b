// The takeover's preflight diff (ADR 0128 decision 3, E6): the live Cilium against the pinned
// chart rendered with the operator's values, through the table of compared values paths
// (pinned.h). Pure: the caller lists the live objects.
//
// Each compared path gives one live and one rendered value, in the live field's terms: a ConfigMap
// or env value is its string (null when the key is absent), a Deployment or init container is
// true or false for present or not, replicas a number, resources a map, capabilities a sorted list.
// A values path the operator set that the table does not cover is listed as not compared, never
// dropped.
#pragma once

#include "common/cni/detect.h"
#include "common/cni/pinned.h"
#include "common/doc/resource_list.h"
#include "common/doc/value.h"
#include "common/util/result.h"

#include <string>
#include <string_view>
#include <vector>

namespace ichor::cni {

// The live objects the preflight reads, from one namespace. Null when absent.
struct LiveCilium {
    std::string namespace_name;
    doc::Value config;                   // ConfigMap cilium-config
    doc::Value agent;                    // DaemonSet cilium
    std::vector<doc::Value> deployments; // every Deployment of the namespace
};

// Picks the live objects out of a cluster listing (namespace as Detection::namespace_name).
LiveCilium live_cilium(const ClusterObjects& objects, std::string_view namespace_name);

struct Difference {
    std::string path;          // values path
    std::string field;         // the live field, in words (Compared::field)
    std::string template_file; // the chart template that renders it
    doc::Value live;
    doc::Value rendered;
};

struct Preflight {
    std::vector<Difference> differences;
    std::vector<std::string> not_compared; // values paths the operator set outside the table
    [[nodiscard]] bool empty() const { return differences.empty(); }
};

// The live field of one row, and the field the render with `values` (render_values) gives it.
doc::Value live_field(const Compared& row, const LiveCilium& live);
doc::Value rendered_field(const Compared& row, const doc::Value& values);

// Compares every row of the table; `user_values` are the operator's (from --cilium-values or the
// release record; owned keys in a record are overridden by Ichor's, which then shows as a
// difference where the live value is not Ichor's).
Preflight preflight(const LiveCilium& live, const doc::Value& user_values,
                    const Pinned& p = pinned());

// Ichor takes over only a Cilium with ipam.mode kubernetes (changing IPAM renumbers pods): any
// other mode, or a cilium-config without data.ipam, is a Findings error naming the live value.
Status check_ipam(const Detection& detection);

// Appends the preflight as results: each difference with `severity`, code "CiliumDiff", tags
// path, live and rendered; each path not compared as Info, code "CiliumNotCompared".
void add_results(doc::ResourceList& list, const Preflight& preflight, doc::Severity severity);

// One difference in words: "hubble.relay.enabled: live true, rendered false (Deployment
// hubble-relay (present or not), templates/hubble-relay/deployment.yaml)".
std::string describe(const Difference& d);

} // namespace ichor::cni
