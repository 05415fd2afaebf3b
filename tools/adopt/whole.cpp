// kubectl ichor adopt without --add-machine: a whole running cluster that Ichor did not make.
// inspect every node, recover or read the bundle, trustcheck, plan the cluster, then (without
// --plan) hold apply and hold release, in one process over the same documents.
#include "common/cli/consent.h"
#include "common/cli/errors.h"
#include "common/cli/output.h"
#include "common/cli/progress.h"
#include "common/cli/run.h"
#include "common/cni/values.h"
#include "common/doc/limits.h"
#include "common/doc/vocabulary.h"
#include "common/inspection/view.h"
#include "common/kube/paths.h"
#include "common/stages/hold.h"
#include "common/stages/inspect.h"
#include "common/stages/node_check.h"
#include "common/stages/objects.h"
#include "common/stages/plan.h"
#include "common/stages/plan_cluster.h"
#include "common/stages/sources.h"
#include "common/stages/trust.h"
#include "common/talos/client.h"
#include "common/util/clock.h"
#include "common/util/files.h"
#include "common/util/strings.h"
#include "tools/adopt/adopt.h"

#include <chrono>
#include <thread>

namespace ichor::tools::adopt {

namespace {

struct Whole {
    std::unique_ptr<kube::Client> kube;
    std::unique_ptr<stages::IchorObjects> objects;
    talos::TalosContext talos;
    std::string talosconfig_path;
    bundle::Bundle bundle;
    std::string bundle_source;
    std::optional<talos::Address> endpoint; // the nodes are reached through it, when set
    doc::Value cluster;       // the TalosCluster as planned (for the release's zero-drift check)
    bool cni_install = false; // no CNI: Ichor installs Cilium; the Nodes must be Ready first
};

// The first control plane among the Inspections, else null.
const doc::Value* first_control_plane(const doc::ResourceList& list) {
    for (const auto& item : list.items) {
        const inspection::View v(item);
        if (v.is_inspection() && (v.role() == "controlplane" || v.role() == "init")) {
            return &item;
        }
    }
    return nullptr;
}

// The Ichor API the adoption writes to: the three kinds of deploy/crds, served.
std::pair<bool, std::string> ichor_api(kube::Client& k) {
    auto g = k.get("/apis/" + std::string(vocab::k_ichor_api));
    if (!g) {
        return {false, g.error().code == "NotFound"
                           ? std::string("the group version ") + std::string(vocab::k_ichor_api) +
                                 " is not served"
                           : g.error().message};
    }
    std::vector<std::string> missing;
    for (const char* plural : {"talosclusters", "talosmachines", "talosconfigpatches"}) {
        bool found = false;
        if (const doc::Value* r = doc::find_path(*g, "resources"); r != nullptr && r->is_array()) {
            for (const auto& res : *r) {
                found = found || res.value("name", "") == plural;
            }
        }
        if (!found) {
            missing.push_back(plural);
        }
    }
    return {missing.empty(),
            missing.empty() ? std::string() : "missing: " + util::join(missing, ", ")};
}

Result<std::vector<talos::Address>> node_addresses(const Options& o, const talos::TalosContext& c) {
    const std::vector<std::string>& given = o.nodes.empty() ? c.nodes : o.nodes;
    if (given.empty()) {
        return cli::usage_error("no nodes: the talosconfig context names none and --nodes is not "
                                "given",
                                "kubectl ichor adopt --talosconfig FILE --nodes CP1,CP2,W1,...");
    }
    std::vector<talos::Address> out;
    for (const auto& text : given) {
        auto a = talos::parse_address(text);
        if (!a) {
            return a.error().wrap("--nodes");
        }
        out.push_back(*a);
    }
    return out;
}

// No single tool plans a whole cluster yet, so the plan step is adopt --plan itself; the rest is
// the pipeline of single tools that adopt runs over the plan.
std::string whole_explain(const Options& o) {
    std::string ns = o.kube.ns.empty() ? "" : " -n " + o.kube.ns;
    std::string tc = o.talos.talosconfig.empty() ? "" : " --talosconfig " + o.talos.talosconfig;
    std::string name = o.kube.cluster.empty() ? "NAME" : o.kube.cluster;
    std::string s = "# the cluster plan has no single-tool step yet: adopt --plan makes it\n";
    s += "kubectl ichor adopt" + tc +
         (o.nodes.empty() ? "" : " --nodes " + util::join(o.nodes, ",")) +
         (o.kube.cluster.empty() ? "" : " --cluster " + o.kube.cluster) + ns +
         (o.bundle.file.empty() ? "" : " --secrets-bundle " + o.bundle.file) +
         (o.cni_unmanaged ? " --cni-unmanaged" : "") +
         (o.cilium_values.empty() ? "" : " --cilium-values " + o.cilium_values) +
         (o.accept_cilium_diff ? " --accept-cilium-diff" : "") + " --plan -o yaml > plan.yaml\n";
    if (!o.plan_only) {
        s += "kubectl ichor hold apply -f plan.yaml" + ns + tc + " --secrets-bundle BUNDLE" +
             (o.yes ? " --yes" : "") + "\n";
        s += "kubectl ichor hold release --cluster " + name + ns + tc + "\n";
        if (o.parallel > 1) {
            s += "# (hold release releases the workers one at a time; --parallel is adopt's)\n";
        }
    }
    return s;
}

// cluster.discovery.enabled in the control plane's configuration (Talos's default is on).
bool discovery_enabled(const doc::Value& cp) {
    const doc::Value* config = inspection::View(cp).config();
    if (config == nullptr) {
        return false;
    }
    for (const auto& d : *config) {
        if (d.contains("kind")) {
            continue;
        }
        const doc::Value* e = doc::find_path(d, "cluster.discovery.enabled");
        return e != nullptr && e->is_boolean() && e->get<bool>();
    }
    return false;
}

// Discovery's members as the first control plane lists them, reached as the Inspection was.
Result<std::vector<stages::DiscoveryMember>> read_members(const doc::Value& cp,
                                                          const talos::TalosContext& ctx,
                                                          const stages::InspectOptions& io) {
    const inspection::View v(cp);
    auto dial = talos::mutual_tls(ctx, io.call_timeout_ms);
    std::optional<talos::Endpoint> ep;
    std::unique_ptr<talos::NodeClient> c;
    if (io.endpoint) {
        ep.emplace(*io.endpoint, dial);
        c = std::make_unique<talos::NodeClient>(*ep, v.address());
    } else {
        auto a = talos::parse_address(v.node());
        if (!a) {
            return a.error();
        }
        c = std::make_unique<talos::NodeClient>(*a, dial);
    }
    auto members = c->discovery_members();
    if (!members) {
        return members.error();
    }
    std::vector<stages::DiscoveryMember> out;
    for (const auto& m : *members) {
        out.push_back({m.hostname, m.addresses});
    }
    return out;
}

// The items of a list of the cluster's Kubernetes API (all namespaces).
Result<std::vector<doc::Value>> list_items(kube::Client& k, const std::string& path,
                                           const kube::ListOptions& lo = {}) {
    auto l = k.list(path, lo);
    if (!l) {
        return l.error().wrap("listing " + path);
    }
    std::vector<doc::Value> out;
    if (const doc::Value* items = doc::find_path(*l, "items"); items && items->is_array()) {
        out.assign(items->begin(), items->end());
    }
    return out;
}

// What CNI detection reads (docs/cni.md): the workloads and ConfigMaps that name a CNI, the Helm
// release records, and the Nodes.
Result<cni::ClusterObjects> cni_objects(kube::Client& k) {
    cni::ClusterObjects c;
    struct Want {
        const char* path;
        std::vector<doc::Value>* into;
        const char* field_selector;
    };
    for (const Want& w : {Want{"/apis/apps/v1/daemonsets", &c.daemonsets, ""},
                          Want{"/apis/apps/v1/deployments", &c.deployments, ""},
                          Want{"/api/v1/configmaps", &c.configmaps, ""},
                          Want{"/api/v1/secrets", &c.secrets, "type=helm.sh/release.v1"},
                          Want{"/api/v1/nodes", &c.nodes, ""}}) {
        kube::ListOptions lo;
        lo.field_selector = w.field_selector;
        auto items = list_items(k, w.path, lo);
        if (!items) {
            return items.error().wrap("reading the cluster's CNI");
        }
        *w.into = std::move(*items);
    }
    return c;
}

// The control planes' configurations, as the Inspections read them.
std::vector<cni::ControlPlane> control_planes(const doc::ResourceList& list) {
    std::vector<cni::ControlPlane> out;
    for (const auto& item : list.items) {
        const inspection::View v(item);
        if (!v.is_inspection() || (v.role() != "controlplane" && v.role() != "init") ||
            v.config() == nullptr) {
            continue;
        }
        cni::ControlPlane cp;
        cp.node = v.node();
        cp.config.documents.assign(v.config()->begin(), v.config()->end());
        const std::string ver = v.talos_version();
        cp.talos_1_14 = !ver.starts_with("v1.12") && !ver.starts_with("v1.13") &&
                        !ver.starts_with("1.12") && !ver.starts_with("1.13");
        out.push_back(std::move(cp));
    }
    return out;
}

// --cilium-values FILE, read and validated as spec.cni.cilium.values is.
Result<cni::CniFlags> cni_flags(const Options& o) {
    cni::CniFlags f;
    f.cni_unmanaged = o.cni_unmanaged;
    if (!o.cilium_values.empty()) {
        auto text = util::read_file(o.cilium_values, doc::k_limits.max_document_bytes);
        if (!text) {
            return text.error().wrap("--cilium-values");
        }
        auto v = cni::read_values(*text, o.cilium_values);
        if (!v) {
            return v.error();
        }
        f.cilium_values = true;
        f.values = *v;
    }
    return f;
}

Status keep(const Options& o, const std::string& name, const doc::ResourceList& list) {
    return keep_stage(o.keep_stages, name, list);
}

stages::Outcome plan(const Options& o, Whole& w, doc::ResourceList& list, cli::Streams& s) {
    auto flags = cni_flags(o); // a bad values file is refused before anything is read
    if (!flags) {
        return stages::failed(flags.error());
    }
    auto k = o.kube.connect(s, "adopt");
    if (!k) {
        return stages::failed(k.error());
    }
    w.kube = std::move(*k);
    w.objects = stages::objects_over(*w.kube);
    auto ctx = o.talos.load(s);
    if (!ctx) {
        return stages::failed(ctx.error());
    }
    w.talos = ctx->context;
    w.talosconfig_path = ctx->path;
    auto addresses = node_addresses(o, w.talos);
    if (!addresses) {
        return stages::failed(addresses.error());
    }
    stages::InspectOptions io;
    io.addresses = *addresses;
    io.context = w.talos;
    io.talosconfig_path = w.talosconfig_path;
    auto ep = o.talos.endpoint_for(w.talos);
    if (!ep) {
        return stages::failed(ep.error());
    }
    io.endpoint = *ep;
    w.endpoint = *ep;
    io.call_timeout_ms = o.talos.call_timeout_ms;
    io.concurrency = o.talos.concurrency;
    cli::Progress progress(s);
    progress.update("reading " + std::to_string(io.addresses.size()) + " node(s)");
    stages::inspect(list, io);
    progress.done();
    if (auto st = keep(o, "1-inspect.yaml", list); !st) {
        return stages::failed(st.error());
    }
    const doc::Value* cp = first_control_plane(list);
    std::string name = o.kube.cluster;
    if (name.empty() && cp != nullptr) {
        name = inspection::View(*cp).cluster_name();
    }
    if (name.empty()) {
        name = "unnamed";
    }

    // The bundle: the file, else recovered read-only from a control plane (the first by default).
    stages::BundleSource src;
    src.file = o.bundle.file;
    src.call_timeout_ms = o.talos.call_timeout_ms;
    src.endpoint = w.endpoint;
    if (src.file.empty()) {
        src.recover_from = !o.bundle.recover_from.empty() ? o.bundle.recover_from
                           : cp != nullptr                ? inspection::View(*cp).node()
                                                          : std::string();
        src.recover_to = o.bundle.recover_to;
    }
    if (src.file.empty() && src.recover_from.empty()) {
        // no control plane: plan_cluster refuses it by name; a bundle of no one is not needed
        w.bundle = bundle::Bundle{};
    } else {
        auto b = stages::load_bundle(src, &w.talos, nullptr, nullptr, [&s](std::string_view m) {
            cli::report_warning(s, "adopt", m);
        });
        if (!b) {
            return stages::failed(b.error());
        }
        w.bundle = *b;
    }
    w.bundle_source = src.file.empty() ? "recovered from " + src.recover_from : "from " + src.file;
    stages::check_trust(list, {&w.bundle, name, w.kube->ns()});
    if (auto st = keep(o, "2-trustcheck.yaml", list); !st) {
        return stages::failed(st.error());
    }

    stages::ClusterPlanOptions po;
    po.cluster = o.kube.cluster;
    po.ns = w.kube->ns();
    po.bundle = &w.bundle;
    po.bundle_source = w.bundle_source;
    auto objects = cni_objects(*w.kube);
    if (!objects) {
        return stages::failed(objects.error());
    }
    po.cni = stages::decide_cni(*objects, control_planes(list), *flags, o.accept_cilium_diff);
    w.cni_install = po.cni.no_cni && po.cni.refusal.empty();
    po.kube_nodes = std::move(objects->nodes); // not read again: 1,000 Nodes are tens of MB
    std::tie(po.ichor_api_served, po.ichor_api_missing) = ichor_api(*w.kube);
    doc::Value existing;
    if (po.ichor_api_served) {
        auto c = w.objects->get("talosclusters", w.kube->ns(), name);
        if (c) {
            existing = *c;
            po.existing_cluster = &existing;
        } else if (c.error().code != "NotFound") {
            return stages::failed(c.error().wrap("reading TalosCluster " + name));
        }
    }
    if (cp != nullptr && discovery_enabled(*cp)) {
        auto m = read_members(*cp, w.talos, io);
        if (!m) {
            return stages::failed(m.error().wrap("reading Talos discovery's members"));
        }
        po.members = std::move(*m);
    }
    stages::Outcome planned = stages::plan_cluster(list, po);
    if (planned.error) {
        return planned;
    }
    for (const auto& item : list.items) {
        if (item.value("kind", "") == "TalosCluster") {
            w.cluster = item;
        }
    }
    if (auto st = keep(o, "3-plan.yaml", list); !st) {
        return stages::failed(st.error());
    }
    if (!o.node_check || planned.done == 0) {
        return planned;
    }
    // Before consent, each node confirms its machine's configuration (a dry run, nothing applied).
    auto control_planes = [&list] {
        int n = 0;
        for (const auto& i : list.items) {
            n += i.value("kind", "") == "TalosMachine" &&
                 doc::get_string(i, "spec.role") == "controlplane";
        }
        return n;
    };
    const int cps = control_planes();
    stages::NodeCheckOptions nc{name, w.kube->ns(), &w.cluster, &w.bundle, {}, io, {}};
    planned = stages::with_node_check(planned, stages::node_check(list, nc));
    if (!planned.error && control_planes() < cps) {
        // A control plane its node rejects refuses the whole cluster, as a blocked one does.
        doc::Value kept = doc::Value::array();
        for (auto& i : list.items) {
            if (i.value("kind", "") == "Inspection") {
                kept.push_back(std::move(i));
            }
        }
        list.items = std::move(kept);
        list.add_result(doc::Severity::Error,
                        "a control plane's node rejected its configuration (see its results "
                        "above), and a cluster is not adopted without all its control planes; " +
                            std::string(vocab::k_nothing_written) +
                            "; hint: fix what the node names, then plan again",
                        "ControlPlaneBlocked");
        planned.stopped += planned.done;
        planned.done = 0;
    }
    if (auto st = keep(o, "4-node-check.yaml", list); !st && !planned.error) {
        return stages::failed(st.error());
    }
    return planned;
}

// True when the Node's Ready condition is True.
bool node_ready(const doc::Value& node) {
    const doc::Value* c = doc::find_path(node, "status.conditions");
    if (c != nullptr && c->is_array()) {
        for (const auto& cond : *c) {
            if (cond.value("type", "") == "Ready") {
                return cond.value("status", "") == "True";
            }
        }
    }
    return false;
}

// Waits until every Node is Ready (no CNI: Ichor's Cilium is being installed).
Status wait_nodes_ready(kube::Client& k, std::int64_t timeout_ms, cli::Progress& progress) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    std::vector<std::string> waiting;
    do {
        auto nodes = list_items(k, "/api/v1/nodes");
        if (!nodes) {
            return nodes.error();
        }
        waiting.clear();
        for (const auto& n : *nodes) {
            if (!node_ready(n)) {
                waiting.push_back(doc::get_string(n, "metadata.name"));
            }
        }
        if (waiting.empty()) {
            progress.announce("cni: Ichor's Cilium runs; every Node is Ready");
            return ok_status();
        }
        progress.update("cni: waiting for Ichor's Cilium: " + util::join(waiting, ", ") +
                        " not Ready");
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    } while (std::chrono::steady_clock::now() < deadline);
    return make_error(ErrorKind::Unreachable,
                      "cni: the Nodes did not become Ready for Ichor's Cilium within " +
                          util::format_duration_ms(timeout_ms) + ": " + util::join(waiting, ", "),
                      "kubectl -n kube-system get pods -l k8s-app=cilium; rerun adopt to resume "
                      "(the machines stay held)",
                      "CniNotReady");
}

stages::Outcome apply_and_release(const Options& o, Whole& w, doc::ResourceList plan,
                                  cli::Streams& s, const stages::Outcome& planned) {
    std::vector<std::string> names;
    for (const auto& i : plan.items) {
        if (i.value("kind", "") == "TalosMachine") {
            names.push_back(doc::get_string(i, "metadata.name"));
        }
    }
    const std::string cluster = doc::get_string(w.cluster, "metadata.name");
    std::string what = "adopt cluster " + cluster + ": create the bundle Secret, TalosCluster " +
                       cluster + ", its patches and " + std::to_string(names.size()) +
                       " held TalosMachine(s) (" + util::join(names, ", ") + ") in namespace " +
                       w.kube->ns() +
                       ", then release them one by one after a live zero-drift check";
    std::vector<std::string> lines = stages::consent_lines(plan);
    for (const auto& r : plan.results) { // what the CNI takeover does is consented to as well
        const std::string code = r["tags"].value(std::string(vocab::k_tag_code), "");
        if ((code == "CniPlan" || code == "CiliumValues") &&
            r["tags"].value(std::string(vocab::k_tag_class), "") != "B") {
            lines.push_back(r.value("message", ""));
        }
    }
    if (auto st = cli::obtain_consent(s, what, lines, o.yes); !st) {
        return stages::failed(st.error());
    }
    cli::Progress progress(s);
    stages::ApplyOptions ao{w.objects.get(),
                            o.backup_dir,
                            util::now_rfc3339(),
                            [&progress](std::string_view m) { progress.announce(m); },
                            stages::config_reader(w.talos, w.endpoint, o.talos.call_timeout_ms),
                            &w.bundle};
    ao.read_concurrency = o.talos.concurrency;
    ao.read_configs = stages::configs_reader(w.talos, w.endpoint, o.talos.call_timeout_ms);
    ao.write_concurrency = o.talos.concurrency;
    ao.writers = stages::writers_over(*w.kube);
    // The blocked workers' results stay in the report; hold apply writes what the plan creates.
    doc::ResourceList applied = plan;
    doc::Value kept = doc::Value::array();
    for (auto& r : applied.results) {
        if (r.value("severity", "") != "error") {
            kept.push_back(r);
        }
    }
    applied.results = kept;
    stages::Outcome apply = stages::hold_apply(applied, ao);
    if (apply.error) {
        progress.done();
        return apply;
    }
    if (w.cni_install) {
        // Ichor's Cilium goes in once the TalosCluster exists (the ichor-cni Job); a hold is
        // released only onto a network that works.
        if (auto st = wait_nodes_ready(*w.kube, o.timeout_ms, progress); !st) {
            progress.done();
            return stages::failed(st.error());
        }
    }
    auto ro = stages::release_options(*w.objects, cluster, names, w.talos, w.talosconfig_path,
                                      o.talos.call_timeout_ms, w.bundle, w.cluster, o.timeout_ms);
    ro.parallel = o.parallel;
    ro.progress = [&progress](std::string_view m) { progress.update(m); };
    ro.say = [&progress](std::string_view m) { progress.announce(m); };
    doc::ResourceList out;
    stages::Outcome release = stages::hold_release(out, ro);
    progress.done();
    if (release.error) {
        return release;
    }
    for (auto& r : plan.results) {
        if (r.value("severity", "") == "error") {
            out.results.push_back(r); // the blocked workers, named again at the end
        }
    }
    for (auto& r : applied.results) {
        out.results.push_back(r);
    }
    stages::note_stages_run(out, applied.stages_run);
    if (auto st = cli::write_list(s, o.output, out, nullptr); !st) {
        return stages::failed(st.error());
    }
    release.stopped += apply.stopped + planned.stopped;
    return release;
}

} // namespace

stages::Outcome adopt_cluster(const Options& o, cli::Streams& s) {
    if (o.explain) {
        s.out << whole_explain(o);
        return {};
    }
    Whole w;
    doc::ResourceList list;
    stages::Outcome planned = plan(o, w, list, s);
    if (planned.error) {
        return planned;
    }
    if (o.plan_only || planned.done == 0) {
        if (auto st = cli::write_list(s, o.output, std::move(list), stages::plan_table); !st) {
            return stages::failed(st.error());
        }
        if (!o.plan_only) {
            planned.done = 0; // refused: the plan's results say why; nothing was written
        }
        return planned;
    }
    return apply_and_release(o, w, std::move(list), s, planned);
}

} // namespace ichor::tools::adopt
