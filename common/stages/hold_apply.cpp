// hold apply: the plan checked against the cluster and the nodes, the backups, then the writes.
#include "common/doc/objects.h"
#include "common/doc/vocabulary.h"
#include "common/inspection/view.h"
#include "common/kube/status.h"
#include "common/machineconfig/machineconfig.h"
#include "common/stages/credentials.h"
#include "common/stages/hold.h"
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
using objects::MachineView;
using objects::PatchView;

using namespace hold_parts;

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

// What changed in the cluster's objects since the plan: one line per change.
Result<std::vector<std::string>> changed_objects(const doc::ResourceList& plan, const Value& basis,
                                                 IchorObjects& objects) {
    std::vector<std::string> changed;
    const Value* tc = doc::find_path(basis, "spec.talosCluster");
    const std::string ns = tc != nullptr ? tc->value("namespace", objects.ns()) : objects.ns();
    const std::string cluster = tc != nullptr ? tc->value("name", "") : "";
    const std::string what = "TalosCluster " + ns + "/" + cluster;
    auto live = objects.get("talosclusters", ns, cluster);
    if (!live && live.error().code != kube::reason::k_not_found) {
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
        if (PatchView(p).cluster() != cluster ||
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
                          vocab::code::k_no_plan_basis);
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
    if (!o.read_configs) {
        return make_error(ErrorKind::Internal, "hold apply without a reader of the nodes");
    }
    // Up to o.read_concurrency at a time: one after the other, 256 nodes took a third of hold
    // apply's wall time (bench/HISTORY.md, "hold apply's reads").
    std::vector<Result<std::string>> read = o.read_configs(addresses, o.read_concurrency);
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
                          vocab::code::k_stale_plan);
    }
    return fresh;
}

Status backup_folder(const std::string& dir) {
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        return make_error(ErrorKind::Io,
                          "cannot create the backup folder " + dir + ": " + std::strerror(errno),
                          "", vocab::code::k_backup_failed);
    }
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        return make_error(ErrorKind::Io, "the backup folder " + dir + " is not a folder", "",
                          vocab::code::k_backup_failed);
    }
    if ((st.st_mode & 077) != 0) {
        return make_error(ErrorKind::Config,
                          "the backup folder " + dir +
                              " can be entered by group or others, and backups hold secrets; " +
                              std::string(vocab::k_nothing_written),
                          "chmod 700 " + dir, vocab::code::k_backup_folder_open);
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
    if (created.error().code != kube::reason::k_already_exists) {
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
        return v.value("kind", "") == "TalosMachine"
                   ? MachineView(v).text(objects::field::k_role, "?")
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
    Value obj = stamped(item, digest, consented_paths(plan, MachineView(item).address()), o);
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
                        kube::reason::k_conflict, &item);
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
            return make_error(
                ErrorKind::Usage,
                "the plan creates the bundle Secret " + name_of(item) +
                    ", and no secrets bundle was given; " + std::string(vocab::k_nothing_written),
                "kubectl ichor hold apply -f PLAN --secrets-bundle FILE", vocab::code::k_no_bundle);
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
                            vocab::code::k_stopped_by_plan, nullptr, tags);
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

} // namespace ichor::stages
