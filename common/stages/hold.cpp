#include "common/stages/hold.h"

#include "common/inspection/view.h"
#include "common/machineconfig/machineconfig.h"
#include "common/stages/credentials.h"
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

namespace {

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

} // namespace

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

namespace {

// The nodes a plan refused or blocked: each named by an error result, none with a TalosMachine in
// the plan (ADR 0128: class C blocks that machine, not the run). `whole` counts the errors that
// stop every machine: one that names no node (the plan's own refusal), or one that names a node the
// plan still creates a machine for.
struct Stopped {
    std::set<std::string> nodes;
    int whole = 0;
};

Stopped stopped_nodes(const doc::ResourceList& plan) {
    std::set<std::string> planned;
    for (const auto& item : plan.items) {
        if (is_created_kind(item) && item.value("kind", "") == "TalosMachine") {
            std::string a = doc::get_string(item, "spec.address");
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

} // namespace

Status check_plan_writable(const doc::ResourceList& plan) {
    const int errors = stopped_nodes(plan).whole;
    if (errors > 0) {
        return make_error(
            ErrorKind::Findings,
            "the plan carries " + std::to_string(errors) +
                " error result(s) (refused or blocked machines); " +
                std::string(vocab::k_nothing_written),
            "read them with: kubectl ichor inspect -f PLAN -o table; fix them and plan again",
            "PlanHasErrors");
    }
    for (const auto& item : plan.items) {
        if (is_created_kind(item)) {
            return ok_status();
        }
    }
    return make_error(ErrorKind::Findings,
                      "the plan creates nothing; " + std::string(vocab::k_nothing_written), "",
                      "NothingToAdopt");
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

// A configuration as read before the first write: the backup's bytes.
struct FreshConfig {
    std::string address;
    std::string bytes;
};

const Value* find_basis(const doc::ResourceList& plan) {
    for (const auto& item : plan.items) {
        if (is_plan_basis(item)) {
            return &item;
        }
    }
    return nullptr;
}

std::string annotation(const Value& obj, std::string_view key); // below

// What changed in the cluster's objects since the plan: one line per change.
Result<std::vector<std::string>> changed_objects(const doc::ResourceList& plan, const Value& basis,
                                                 IchorObjects& objects) {
    std::vector<std::string> changed;
    const Value* tc = doc::find_path(basis, "spec.talosCluster");
    const std::string ns = tc != nullptr ? tc->value("namespace", objects.ns()) : objects.ns();
    const std::string cluster = tc != nullptr ? tc->value("name", "") : "";
    const std::string what = "TalosCluster " + ns + "/" + cluster;
    auto live = objects.get("talosclusters", ns, cluster);
    if (!live && live.error().code != "NotFound") {
        return live.error().wrap("reading " + what);
    }
    const std::string was = tc != nullptr ? tc->value("resourceVersion", "") : "";
    // A whole-cluster plan creates its TalosCluster: absent, or there from this plan's earlier
    // try, it is as the plan saw it.
    const bool creates = std::any_of(plan.items.begin(), plan.items.end(), [&](const Value& i) {
        return is_created_kind(i) && i.value("kind", "") == "TalosCluster" && name_of(i) == cluster;
    });
    if (creates) {
        if (live && annotation(*live, vocab::k_annotation_plan_digest) != plan_digest(plan)) {
            changed.push_back(what + " was created since the plan");
        }
    } else if (!live) {
        changed.push_back(what + " was deleted");
    } else if (auto now = doc::get_string(*live, "metadata.resourceVersion"); now != was) {
        changed.push_back(what + " changed (resourceVersion " + was + ", now " + now + ")");
    }
    auto patches = objects.list("talosconfigpatches");
    if (!patches) {
        return patches.error();
    }
    std::map<std::string, std::string> recorded;
    if (const Value* p = doc::find_path(basis, "spec.patches"); p != nullptr && p->is_array()) {
        for (const auto& r : *p) {
            recorded[r.value("name", "")] = r.value("resourceVersion", "");
        }
    }
    std::set<std::string> planned;
    for (const auto& item : plan.items) {
        if (is_created_kind(item)) {
            planned.insert(name_of(item));
        }
    }
    std::set<std::string> seen;
    for (const auto& p : *patches) {
        const std::string name = name_of(p);
        if (doc::get_string(p, "spec.cluster") != cluster ||
            (planned.contains(name) && !recorded.contains(name))) {
            continue; // another cluster's, or this plan's own from an earlier try
        }
        seen.insert(name);
        auto it = recorded.find(name);
        const std::string now = doc::get_string(p, "metadata.resourceVersion");
        if (it == recorded.end()) {
            changed.push_back("TalosConfigPatch " + name + " was added");
        } else if (it->second != now) {
            changed.push_back("TalosConfigPatch " + name + " changed (resourceVersion " +
                              it->second + ", now " + now + ")");
        }
    }
    for (const auto& [name, rv] : recorded) {
        if (!seen.contains(name)) {
            changed.push_back("TalosConfigPatch " + name + " was deleted");
        }
    }
    return changed;
}

// A step for the user, when there is someone to tell.
void step(Reporter* report, std::string_view line) {
    if (report != nullptr) {
        report->step(line);
    }
}

// Each address's configuration, in the order given, up to o.read_concurrency at a time: one
// after the other, 256 nodes took a third of hold apply's wall time (bench/HISTORY.md, "hold
// apply's reads").
std::vector<Result<std::string>> read_configs(const std::vector<talos::Address>& addresses,
                                              const ApplyOptions& o) {
    if (o.read_configs) {
        return o.read_configs(addresses, o.read_concurrency);
    }
    std::vector<Result<std::string>> out(addresses.size(),
                                         make_error(ErrorKind::Internal, "not read"));
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t i = next++; i < addresses.size(); i = next++) {
            out[i] = o.read_config(addresses[i]);
        }
    };
    const int n = std::clamp(o.read_concurrency, 1,
                             static_cast<int>(std::max<std::size_t>(addresses.size(), 1)));
    std::vector<std::thread> threads;
    for (int t = 1; t < n; ++t) {
        threads.emplace_back(work);
    }
    work();
    for (auto& t : threads) {
        t.join();
    }
    return out;
}

// Reads each node the plan creates a machine for, once, and checks the plan against the world:
// the configurations read (the backups), or why the plan may not be applied.
Result<std::vector<FreshConfig>> read_and_check(const doc::ResourceList& plan,
                                                const ApplyOptions& o) {
    const Value* basis = find_basis(plan);
    if (basis == nullptr) {
        return make_error(ErrorKind::Findings,
                          "the plan records no PlanBasis (what it was made from), so whether it "
                          "is stale cannot be told; " +
                              std::string(vocab::k_nothing_written),
                          "plan again with this release: kubectl ichor drift --cluster NAME -f "
                          "TRUSTED",
                          "NoPlanBasis");
    }
    auto changed = changed_objects(plan, *basis, *o.objects);
    if (!changed) {
        return changed.error();
    }
    std::vector<FreshConfig> fresh;
    const Value* found = doc::find_path(*basis, "spec.nodes");
    const Value none = Value::array();
    const Value& nodes = found != nullptr && found->is_array() ? *found : none;
    std::vector<talos::Address> addresses;
    for (const auto& n : nodes) {
        auto addr = talos::parse_address(n.value("address", ""));
        if (!addr) {
            return addr.error().wrap("the plan's PlanBasis");
        }
        addresses.push_back(*addr);
    }
    std::vector<Result<std::string>> read = read_configs(addresses, o);
    std::size_t i = 0;
    for (const auto& n : nodes) {
        const std::string text = n.value("address", "");
        Result<std::string>& bytes = read[i++];
        if (!bytes) {
            return bytes.error().wrap("reading the configuration of " + text +
                                      " before the first write (" +
                                      std::string(vocab::k_nothing_written) + ")");
        }
        const std::string was = n.value("configDigest", "");
        if (std::string now = util::sha256_digest(*bytes); now != was) {
            changed->push_back("the configuration of " + text + " changed (" + was + ", now " +
                               now + ")");
        }
        fresh.push_back({text, std::move(*bytes)});
    }
    if (!changed->empty()) {
        return make_error(ErrorKind::Findings,
                          "the plan is stale: " + util::join(*changed, "; ") + "; " +
                              std::string(vocab::k_nothing_written),
                          "plan again: kubectl ichor inspect ADDRESS... | kubectl ichor "
                          "trustcheck --cluster NAME | kubectl ichor drift --cluster NAME",
                          "StalePlan");
    }
    return fresh;
}

Status backup_folder(const std::string& dir) {
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        return make_error(ErrorKind::Io,
                          "cannot create the backup folder " + dir + ": " + std::strerror(errno),
                          "", "BackupFailed");
    }
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        return make_error(ErrorKind::Io, "the backup folder " + dir + " is not a folder", "",
                          "BackupFailed");
    }
    if ((st.st_mode & 077) != 0) {
        return make_error(ErrorKind::Config,
                          "the backup folder " + dir +
                              " can be entered by group or others, and backups hold secrets; " +
                              std::string(vocab::k_nothing_written),
                          "chmod 700 " + dir, "BackupFolderOpen");
    }
    return ok_status();
}

Status write_backups(const std::vector<FreshConfig>& fresh, const ApplyOptions& o) {
    if (fresh.empty()) {
        return ok_status();
    }
    if (auto st = backup_folder(o.backup_dir); !st) {
        return st;
    }
    for (const auto& f : fresh) {
        // Never over an earlier backup: a rerun in the same second gets the next free suffix.
        std::string base = o.backup_dir + "/" + f.address + "-" + o.now_rfc3339;
        std::string path = base + ".yaml";
        Status st = util::write_private_file(path, f.bytes, false);
        for (int n = 2; !st && util::read_file(path).ok() && n < 100; ++n) {
            path = base + "-" + std::to_string(n) + ".yaml";
            st = util::write_private_file(path, f.bytes, false);
        }
        if (!st) {
            return st.error().wrap("backup of " + f.address);
        }
        step(o.report, "saved the configuration of " + f.address + " as the node returned it to " +
                           path + " (0600); it holds the machine's secrets: keep it safe");
    }
    // Every backup, and the folder's entries for them, on disk before the first write.
    if (auto st = util::sync_filesystem(o.backup_dir); !st) {
        return st.error().wrap("saving the backups");
    }
    return ok_status();
}

std::string annotation(const Value& obj, std::string_view key) {
    const Value* a = doc::find_path(obj, "metadata.annotations");
    if (a == nullptr || !a->is_object() || !a->contains(std::string(key))) {
        return {};
    }
    const Value& v = (*a)[std::string(key)];
    return v.is_string() ? v.get<std::string>() : v.dump();
}

Value stamped(Value item, const std::string& digest, const std::string& consented,
              const ApplyOptions& o) {
    auto& md = item["metadata"];
    md["annotations"][std::string(vocab::k_annotation_plan_digest)] = digest;
    md["annotations"][std::string(vocab::k_annotation_applied_at)] = o.now_rfc3339;
    if (item.value("kind", "") == "TalosMachine") {
        md["annotations"][std::string(vocab::k_annotation_consented_drift)] = consented;
    }
    return item;
}

// The consented class B paths of each machine, as a JSON list, for the zero-drift check later.
std::string consented_paths(const doc::ResourceList& plan, const std::string& address) {
    Value paths = Value::array();
    for (const auto& r : plan.results) {
        if (is_class(r, "B") && r["tags"].value(std::string(doc::k_tag_node), "") == address) {
            const Value* f = doc::find_path(r, "field");
            if (f != nullptr) {
                paths.push_back(f->value("path", ""));
            }
        }
    }
    return paths.dump();
}

// One create as it ended.
struct Written {
    enum class End { NotTried, Created, Existing, Conflict, Failed } end = End::NotTried;
    Value obj;                  // Created, Existing: the object in the cluster
    std::optional<Error> error; // Failed
};

// Creates `obj`; one that exists is looked at: this plan's (Existing) or another's (Conflict).
Written create_one(IchorObjects& objects, const Value& obj, const std::string& digest) {
    const std::string ns = doc::get_string(obj, "metadata.namespace", objects.ns());
    auto created = objects.create(plural(obj), ns, obj);
    if (created) {
        return {Written::End::Created, std::move(*created), std::nullopt};
    }
    if (created.error().code != "AlreadyExists") {
        return {Written::End::Failed, Value(), created.error()};
    }
    auto existing = objects.get(plural(obj), ns, name_of(obj));
    if (existing && annotation(*existing, vocab::k_annotation_plan_digest) == digest) {
        return {Written::End::Existing, std::move(*existing), std::nullopt};
    }
    return {Written::End::Conflict, Value(), std::nullopt};
}

// The end of the batch that starts at items[i]: a run of TalosMachines of one role (written
// concurrently), else that one object. The machines reference the patches and the TalosCluster
// before them, and control planes stay before workers.
std::size_t batch_end(const std::vector<const Value*>& items, std::size_t i) {
    auto machine_role = [](const Value& v) {
        return v.value("kind", "") == "TalosMachine" ? doc::get_string(v, "spec.role", "?")
                                                     : std::string();
    };
    const std::string role = machine_role(*items[i]);
    std::size_t end = i + 1;
    while (!role.empty() && end < items.size() && machine_role(*items[end]) == role) {
        ++end;
    }
    return end;
}

// The creates, through `objects` one at a time, or through the writers' own objects up to
// write_concurrency at a time: started in the given order, none started after a failure, so
// that every object before the first failure is tried, as one at a time would.
class Writers {
  public:
    explicit Writers(const ApplyOptions& o) : m_o(o) {}

    std::vector<Written> write(const std::vector<Value>& objs, const std::string& digest) {
        std::vector<Written> out(objs.size());
        const std::size_t n = std::min<std::size_t>(
            std::clamp(m_o.write_concurrency, 1, k_max_write_concurrency), objs.size());
        while (m_o.writers && m_own.size() < n) {
            auto w = m_o.writers();
            if (w == nullptr) {
                break;
            }
            m_own.push_back(std::move(w));
        }
        std::atomic<std::size_t> next{0};
        std::atomic<std::size_t> failed_at{objs.size()};
        auto work = [&](IchorObjects& objects) {
            for (std::size_t i = next++; i < objs.size(); i = next++) {
                if (i > failed_at.load()) {
                    continue;
                }
                out[i] = create_one(objects, objs[i], digest);
                if (out[i].end == Written::End::Failed) {
                    std::size_t was = failed_at.load();
                    while (i < was && !failed_at.compare_exchange_weak(was, i)) {
                    }
                }
            }
        };
        if (n <= 1 || m_own.size() < 2) {
            work(*m_o.objects);
            return out;
        }
        std::vector<std::thread> threads;
        for (std::size_t t = 0; t < std::min(n, m_own.size()); ++t) {
            threads.emplace_back(work, std::ref(*m_own[t]));
        }
        for (auto& t : threads) {
            t.join();
        }
        return out;
    }

  private:
    const ApplyOptions& m_o;
    std::vector<std::unique_ptr<IchorObjects>> m_own; // kept: their connections are reused
};

// The object to create for plan item `item`: stamped, the bundle Secret with its data.
Value to_create(const Value& item, const doc::ResourceList& plan, const std::string& digest,
                const ApplyOptions& o) {
    Value obj =
        stamped(item, digest, consented_paths(plan, doc::get_string(item, "spec.address")), o);
    if (is_bundle_secret(item)) {
        obj["data"]["bundle.yaml"] = util::base64_encode(bundle::to_yaml(*o.bundle));
    }
    return obj;
}

// One create's end in the list and the outcome, in the plan's order; the first failure is kept.
void report(Written& w, const Value& item, const std::string& default_ns, doc::ResourceList& list,
            Outcome& out, std::optional<Error>& first_failure, const ApplyOptions& o) {
    const std::string what = item.value("kind", "") + " " +
                             doc::get_string(item, "metadata.namespace", default_ns) + "/" +
                             name_of(item);
    if (w.obj.is_object() && w.obj.value("kind", item.value("kind", "")) == "Secret") {
        w.obj.erase("data"); // a Secret's values never reach the output
        w.obj.erase("stringData");
    }
    switch (w.end) {
    case Written::End::NotTried:
        return;
    case Written::End::Created:
        ++out.done;
        step(o.report, "created " + what);
        list.items.push_back(std::move(w.obj));
        return;
    case Written::End::Existing:
        ++out.done;
        ++out.skipped;
        step(o.report, what + " already exists from this plan");
        list.items.push_back(std::move(w.obj));
        return;
    case Written::End::Conflict:
        ++out.stopped;
        list.add_result(doc::Severity::Error,
                        what + " already exists and was not written by this plan; it was left "
                               "as it is",
                        "Conflict", &item);
        return;
    case Written::End::Failed:
        if (!first_failure) {
            first_failure = w.error->wrap("creating " + what);
        }
        return;
    }
}
// A plan that creates the bundle Secret needs the bundle.
Status check_bundle_given(const doc::ResourceList& list, const ApplyOptions& o) {
    for (const auto& item : list.items) {
        if (is_bundle_secret(item) && o.bundle == nullptr) {
            return make_error(ErrorKind::Usage,
                              "the plan creates the bundle Secret " + name_of(item) +
                                  ", and no secrets bundle was given; " +
                                  std::string(vocab::k_nothing_written),
                              "kubectl ichor hold apply -f PLAN --secrets-bundle FILE", "NoBundle");
        }
    }
    return ok_status();
}

// The credentials' values, from the configurations just read, before anything is written.
Result<std::map<std::string, Value>> credentials_of(const doc::ResourceList& list,
                                                    const std::vector<FreshConfig>& fresh) {
    std::map<std::string, Value> credentials;
    std::vector<std::pair<std::string, std::string>> configs;
    for (const auto& f : fresh) {
        configs.emplace_back(f.address, f.bytes);
    }
    for (const auto& item : list.items) {
        if (is_credentials_secret(item)) {
            auto filled = fill_credentials(item, configs);
            if (!filled) {
                return filled.error();
            }
            credentials[name_of(item)] = std::move(*filled);
        }
    }
    return credentials;
}
} // namespace

Outcome hold_apply(doc::ResourceList& list, const ApplyOptions& o) {
    return run_stage("hold-apply", list, [&] {
        if (auto st = check_plan_writable(list); !st) {
            return failed(st.error());
        }
        if (auto st = check_bundle_given(list, o); !st) {
            return failed(st.error());
        }
        auto fresh = read_and_check(list, o);
        if (!fresh) {
            return failed(fresh.error());
        }
        auto filled = credentials_of(list, *fresh);
        if (!filled) {
            return failed(filled.error());
        }
        std::map<std::string, Value> credentials = std::move(*filled);
        if (auto st = write_backups(*fresh, o); !st) {
            return failed(st.error());
        }
        const doc::ResourceList plan = std::move(list);
        list = doc::ResourceList{};
        std::string digest = plan_digest(plan);
        Outcome out;
        for (const auto& node : stopped_nodes(plan).nodes) {
            ++out.stopped; // the plan's own results say why; the others go on
            Value tags = Value::object();
            tags[std::string(doc::k_tag_node)] = node;
            list.add_result(doc::Severity::Error,
                            node + ": refused or blocked by the plan (its results say why); " +
                                std::string(vocab::k_nothing_written) + " for it",
                            "StoppedByPlan", nullptr, tags);
        }
        std::vector<const Value*> items;
        for (const auto& item : plan.items) {
            if (is_created_kind(item)) {
                items.push_back(&item);
            }
        }
        Writers writers(o);
        std::optional<Error> first_failure;
        for (std::size_t i = 0; i < items.size() && !first_failure;) {
            const std::size_t end = batch_end(items, i);
            std::vector<Value> objs;
            for (std::size_t k = i; k < end; ++k) {
                objs.push_back(to_create(*items[k], plan, digest, o));
                if (is_credentials_secret(*items[k])) {
                    Value filled = credentials[name_of(*items[k])];
                    filled["metadata"] = objs.back()["metadata"];
                    objs.back() = std::move(filled);
                }
            }
            std::vector<Written> ends = writers.write(objs, digest);
            for (std::size_t k = i; k < end; ++k) {
                report(ends[k - i], *items[k], o.objects->ns(), list, out, first_failure, o);
            }
            i = end;
        }
        if (first_failure) {
            Outcome stop = failed(*first_failure);
            stop.done = out.done;
            return stop;
        }
        return out;
    });
}

namespace {

bool has_annotation(const Value& obj, std::string_view key) {
    const Value* a = doc::find_path(obj, "metadata.annotations");
    return a != nullptr && a->is_object() && a->contains(std::string(key));
}

std::string condition(const Value& obj, const std::string& type) {
    const Value* c = doc::find_path(obj, "status.conditions");
    if (c == nullptr || !c->is_array()) {
        return {};
    }
    for (const auto& cond : *c) {
        if (cond.value("type", "") == type) {
            return cond.value("status", "");
        }
    }
    return {};
}

// The live zero-drift check: inspect the node again, check its trust, plan it against the cluster
// with every patch; only the consented class B paths may remain.
// `po` holds the namespace's patches and every machine of it: the plan sees every machine but
// this one (taken out for the check, then put back where it was).
Status zero_drift(const Value& machine, PlanOptions& po, const ReleaseOptions& o) {
    std::string name = name_of(machine);
    auto addr = talos::parse_address(doc::get_string(machine, "spec.address"));
    if (!addr) {
        return addr.error().wrap(name);
    }
    doc::ResourceList list;
    list.items.push_back(o.read_node ? o.read_node(*addr, list.results)
                                     : inspect_node(*addr, o.inspect, list.results));
    const std::string& ns = o.objects->ns();
    check_trust(list, {o.bundle, o.cluster, ns});
    std::vector<std::pair<std::size_t, Value>> taken; // from the end, so that indexes hold
    for (std::size_t i = po.machines.size(); i-- > 0;) {
        if (name_of(po.machines[i]) == name) {
            taken.emplace_back(i, std::move(po.machines[i]));
            po.machines.erase(po.machines.begin() + static_cast<std::ptrdiff_t>(i));
        }
    }
    Outcome planned = plan(list, po);
    for (auto it = taken.rbegin(); it != taken.rend(); ++it) {
        po.machines.insert(po.machines.begin() + static_cast<std::ptrdiff_t>(it->first),
                           std::move(it->second));
    }
    if (planned.error) {
        return planned.error->wrap(name);
    }
    std::set<std::string> consented;
    if (auto parsed =
            doc::parse_one(annotation(machine, vocab::k_annotation_consented_drift), "consented");
        parsed && parsed->is_array()) {
        for (const auto& p : *parsed) {
            consented.insert(p.get<std::string>());
        }
    }
    std::vector<std::string> problems;
    for (const auto& r : list.results) {
        std::string sev = r.value("severity", "");
        const Value* f = doc::find_path(r, "field");
        std::string path = f != nullptr ? f->value("path", "") : "";
        if (sev == "error" || is_class(r, "A") || (is_class(r, "B") && !consented.contains(path))) {
            problems.push_back(r.value("message", ""));
        }
    }
    if (!problems.empty()) {
        return make_error(
            ErrorKind::Findings,
            name +
                ": the live zero-drift check failed; the hold stays: " + util::join(problems, "; "),
            "kubectl ichor inspect " + addr->text + " | kubectl ichor trustcheck --cluster " +
                o.cluster + " | kubectl ichor drift --cluster " + o.cluster,
            "DriftSincePlan");
    }
    return ok_status();
}

// Waits for machine `name`, the `index`th of `total` being released, to be Ready without
// AdoptionHeld; the progress line says which machine, how long it has waited and for what.
Status wait_ready(const std::string& name, std::size_t index, std::size_t total,
                  const ReleaseOptions& o) {
    util::Clock& clock = o.clock != nullptr ? *o.clock : util::system_clock();
    const std::int64_t start = clock.monotonic_ms();
    const std::int64_t deadline = start + o.timeout_ms;
    std::string last = "no answer yet";
    while (clock.monotonic_ms() < deadline) {
        auto m = o.objects->get("talosmachines", o.objects->ns(), name);
        if (m) {
            std::string ready = condition(*m, std::string(vocab::k_condition_ready));
            std::string held = condition(*m, std::string(vocab::k_condition_adoption_held));
            if (ready == "True" && held != "True") {
                return ok_status();
            }
            last = "Ready=" + (ready.empty() ? "unknown" : ready) +
                   (held == "True" ? ", AdoptionHeld" : "");
        }
        if (o.report != nullptr) {
            const std::int64_t waited = clock.monotonic_ms() - start;
            o.report->status("machine " + std::to_string(index) + " of " + std::to_string(total) +
                             ": waiting for " + name + " to be Ready, " +
                             util::format_duration_ms(waited / 1000 * 1000) + " of " +
                             util::format_duration_ms(o.timeout_ms) + " (" + last + ")");
        }
        if (o.sleep_ms) {
            o.sleep_ms(500);
        } else {
            clock.sleep_ms(500);
        }
    }
    return make_error(
        ErrorKind::Unreachable,
        name + ": not Ready within " + util::format_duration_ms(o.timeout_ms) + " (" + last + ")",
        "kubectl get talosmachine -n " + o.objects->ns() + " " + name + " -o yaml", "Timeout");
}

// The bytes of a node's MachineConfig resource, as the node returned them.
Result<std::string> machine_config_bytes(Result<talos::Resource> res) {
    if (!res) {
        return res.error();
    }
    auto spec = talos::decode_spec<talos::spec::MachineConfig>(*res);
    if (!spec) {
        return spec.error();
    }
    return spec->yaml_marshalled();
}

} // namespace

ReadConfig config_reader(const talos::TalosContext& context,
                         const std::optional<talos::Address>& endpoint,
                         std::int64_t call_timeout_ms) {
    return [context, endpoint, call_timeout_ms](const talos::Address& a) -> Result<std::string> {
        const talos::Reach reach(talos::mutual_tls(context, call_timeout_ms), endpoint);
        return machine_config_bytes(reach.client(a).cosi_get(talos::kind::k_machine_config));
    };
}

ReadConfigs configs_reader(const talos::TalosContext& context,
                           const std::optional<talos::Address>& endpoint,
                           std::int64_t call_timeout_ms) {
    return [context, endpoint, call_timeout_ms](const std::vector<talos::Address>& addresses,
                                                int concurrency) {
        std::vector<Result<std::string>> out(addresses.size(),
                                             make_error(ErrorKind::Internal, "not read"));
        // made before the loops start, its endpoint's channel shared by them
        const talos::Reach reach(talos::mutual_tls(context, call_timeout_ms), endpoint);
        std::atomic<std::size_t> next{0};
        talos::run_on_loops(concurrency, addresses.size(), [&](talos::Loop& loop, int share) {
            std::function<void()> start_next = [&] {
                std::size_t i = next++;
                if (i >= addresses.size()) {
                    return;
                }
                talos::NodeClient c = reach.client(addresses[i]);
                // The client may go once its call is started; the call keeps what it needs.
                c.cosi_get(loop, talos::kind::k_machine_config,
                           [&out, i, &start_next](Result<talos::Resource> r) {
                               out[i] = machine_config_bytes(std::move(r));
                               start_next();
                           });
            };
            for (int k = 0; k < share; ++k) {
                start_next();
            }
            loop.run();
        });
        return out;
    };
}

ReleaseOptions release_options(IchorObjects& objects, const std::string& cluster,
                               std::vector<std::string> machines,
                               const talos::TalosContext& context,
                               const std::string& talosconfig_path, std::int64_t call_timeout_ms,
                               const bundle::Bundle& bundle, const doc::Value& talos_cluster,
                               std::int64_t timeout_ms) {
    ReleaseOptions ro;
    ro.objects = &objects;
    ro.cluster = cluster;
    ro.machines = std::move(machines);
    ro.inspect.context = context;
    ro.inspect.talosconfig_path = talosconfig_path;
    ro.inspect.call_timeout_ms = call_timeout_ms;
    ro.bundle = &bundle;
    ro.talos_cluster = &talos_cluster;
    ro.timeout_ms = timeout_ms;
    return ro;
}

namespace {

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

bool is_control_plane(const Value& m) {
    return doc::get_string(m, "spec.role") == "controlplane";
}

// The held machines chosen (all when none is named), control planes first.
std::vector<Value> held_machines(const std::vector<Value>& machines,
                                 const std::vector<std::string>& chosen) {
    std::vector<Value> held;
    for (const auto& m : machines) {
        bool named =
            chosen.empty() || std::find(chosen.begin(), chosen.end(), name_of(m)) != chosen.end();
        if (named && has_annotation(m, vocab::k_annotation_hold_apply)) {
            held.push_back(m);
        }
    }
    std::stable_sort(held.begin(), held.end(), [](const Value& a, const Value& b) {
        return is_control_plane(a) > is_control_plane(b);
    });
    return held;
}

// Control planes one at a time; workers in waves of `parallel`, each wave waiting for Ready.
std::vector<std::vector<const Value*>> release_waves(const std::vector<Value>& held, int parallel) {
    std::vector<std::vector<const Value*>> waves;
    for (const auto& m : held) {
        if (is_control_plane(m) || waves.empty() || is_control_plane(*waves.back().front()) ||
            static_cast<int>(waves.back().size()) >= std::max(1, parallel)) {
            waves.emplace_back();
        }
        waves.back().push_back(&m);
    }
    return waves;
}

Outcome release(doc::ResourceList& list, const ReleaseOptions& o) {
    IchorObjects& objects = *o.objects;
    auto read = cluster_objects(objects, o.cluster);
    if (!read) {
        return failed(read.error());
    }
    auto& [machines, patches] = *read;
    list = doc::ResourceList{};
    std::vector<Value> held = held_machines(machines, o.machines);
    const auto waves = release_waves(held, o.parallel);
    // One PlanOptions for every zero-drift check of the release, instead of a copy of the
    // namespace's machines and patches for each machine: quadratic, a million copies of a
    // TalosMachine on 1,000 machines (issue 22, "a thousand nodes").
    PlanOptions po{o.cluster, o.objects->ns(), true, o.talos_cluster, o.bundle, {}, {}};
    po.patches = std::move(patches);
    po.machines = std::move(machines);
    Outcome out;
    std::size_t index = 0;
    for (const auto& wave : waves) {
        std::vector<std::pair<const Value*, Status>> started;
        for (const Value* m : wave) {
            const std::string name = name_of(*m);
            Status st = zero_drift(*m, po, o);
            if (st) {
                Value patch = {
                    {"metadata",
                     {{"annotations", {{std::string(vocab::k_annotation_hold_apply), nullptr}}}}}};
                auto r = objects.merge_patch("talosmachines", name, patch);
                st = r ? ok_status() : Status(r.error().wrap("releasing " + name));
            }
            if (st) {
                step(o.report, "released the hold on " + name + "; waiting for Ready");
            }
            started.emplace_back(m, std::move(st));
        }
        for (auto& [m, st] : started) {
            ++index;
            const std::string name = name_of(*m);
            if (st) {
                st = wait_ready(name, index, held.size(), o);
            }
            if (st) {
                ++out.done;
                step(o.report, name + " is Ready");
                list.add_result(doc::Severity::Info, name + ": released and Ready", "Released", m);
            } else {
                ++out.stopped;
                list.add_result(doc::Severity::Error,
                                st.error().message + "; hint: " + st.error().hint, st.error().code,
                                m);
            }
            list.items.push_back(*m);
        }
    }
    if (held.empty()) {
        list.add_result(doc::Severity::Info, "no held machine of cluster " + o.cluster,
                        "NothingHeld");
    }
    return out;
}

} // namespace

Outcome hold_release(doc::ResourceList& list, const ReleaseOptions& o) {
    return run_stage("hold-release", list, [&] { return release(list, o); });
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
                        "removed " + obj.value("kind", "") + " " + name_of(obj), "Removed", &obj);
    }
}

// The Secrets of a removed patch's credentials that an adoption wrote (they carry its plan
// digest); a Secret the person made and named in spec.secretValues stays.
void remove_credentials(IchorObjects& objects, const Value& patch, doc::ResourceList& list,
                        Outcome& out) {
    std::set<std::string> names;
    if (const Value* sv = doc::find_path(patch, "spec.secretValues");
        sv != nullptr && sv->is_array()) {
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
                "AlreadyReleased"));
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
            if (doc::get_string(p, "spec.machine") == name &&
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
        if (doc::get_string(p, "spec.cluster") == o.cluster &&
            doc::get_string(p, "spec.layer") != "machine" &&
            annotation(p, vocab::k_annotation_plan_digest) == digest) {
            remove_object(objects, "talosconfigpatches", p, list, out);
            remove_credentials(objects, p, list, out);
        }
    }
    remove_object(objects, "talosclusters", *made, list, out);
    const std::string secret = doc::get_string(*made, "spec.secretsBundleRef.name");
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
