// kube-smoke: the Kubernetes client against the lab's real kube-apiserver. Reads KUBECONFIG (the
// lab's admin, a client certificate) and ICHOR_LAB_STATE (for kubeconfig-noaccess). Checks, each
// printed as ok/FAIL:
//   1. create, AlreadyExists, get, paged list, merge patch (and a stale-resourceVersion Conflict),
//      Invalid, server-side apply (fieldManager, force), the status subresource, an unknown-field
//      Warning, and delete with uid/resourceVersion preconditions behind the allow-delete
//      annotation, of TalosMachines in ichor-system;
//   2. Forbidden typing with the no-access user (hint: kubectl auth can-i ...);
//   3. an exec plugin kubeconfig (a shell script printing the admin's client certificate as an
//      ExecCredential, relative command, provideClusterInfo) and a token plugin (the no-access
//      token: Forbidden);
//   4. tls-server-name (right and wrong name), an untrusted server, a closed port.
// Exit 0 when all pass, 1 on any failure, 2 when the lab cannot be read.
#include "common/kube/client.h"
#include "common/util/files.h"
#include "common/util/strings.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

extern char** environ;

using namespace ichor;
using namespace ichor::kube;

namespace {

int g_failures = 0;

void report(bool ok, const std::string& what) {
    std::cout << (ok ? "ok:   " : "FAIL: ") << what << "\n";
    g_failures += ok ? 0 : 1;
}

template <class T> std::string describe(const Result<T>& r) {
    if (r.ok()) {
        return "ok";
    }
    return "error [" + r.error().code + "] " + r.error().message +
           (r.error().hint.empty() ? "" : " (hint: " + r.error().hint + ")");
}

Environment process_env() {
    Environment env;
    for (char** e = environ; *e != nullptr; ++e) {
        std::string kv = *e;
        auto eq = kv.find('=');
        env.vars[kv.substr(0, eq)] = eq == std::string::npos ? "" : kv.substr(eq + 1);
    }
    return env;
}

std::vector<std::string> g_warnings;

ClientOptions options() {
    ClientOptions o;
    o.timeout_ms = 15000;
    o.on_warning = [](std::string_view w) { g_warnings.emplace_back(w); };
    o.exec_io.stderr_fd = -1;
    return o;
}

// A TalosMachine labelled with its run (BASE-N is labelled ichor.maesh.dev/test=BASE).
doc::Value machine(const std::string& name) {
    const std::string run = name.substr(0, name.rfind('-'));
    return doc::Value::parse(R"({"apiVersion":"ichor.maesh.dev/v1alpha1","kind":"TalosMachine",
        "metadata":{"name":")" +
                             name + R"(","labels":{"ichor.maesh.dev/test":")" + run + R"("},
                    "annotations":{"ichor.maesh.dev/allow-delete":"true"}},
        "spec":{"cluster":"kube-smoke","role":"worker","address":"10.9.0.1"}})");
}

std::string code_of(const Result<doc::Value>& r) {
    return r.ok() ? "ok" : r.error().code;
}

// Creates BASE-1 and BASE-2, reads and lists them; returns BASE-1's first resourceVersion.
std::string check_create_get_list(Client& c, const std::string& base) {
    const std::string ns = c.ns();
    const std::string coll = ichor_path("talosmachines", ns);
    const std::string m1 = base + "-1";
    const std::string p1 = ichor_path("talosmachines", ns, m1);

    auto created = c.create(coll, machine(m1));
    report(created.ok() && doc::get_string(*created, "spec.approval") == "Pending" &&
               !doc::get_string(*created, "metadata.uid").empty(),
           "create " + m1 + " in " + ns + " (approval defaulted to Pending): " + describe(created));
    auto again = c.create(coll, machine(m1));
    report(!again.ok() && again.error().code == "AlreadyExists" &&
               again.error().kind == ErrorKind::Config,
           "create again: AlreadyExists: " + describe(again));
    auto got = c.get(p1);
    report(got.ok() && created.ok() && (*got)["metadata"]["uid"] == (*created)["metadata"]["uid"],
           "get " + m1 + ": " + describe(got));
    auto missing = c.get(ichor_path("talosmachines", ns, base + "-none"));
    report(!missing.ok() && missing.error().code == "NotFound",
           "get a missing machine: NotFound: " + describe(missing));

    g_warnings.clear();
    doc::Value m2 = machine(base + "-2");
    m2["spec"]["bogus"] = 1;
    auto c2 = c.create(coll, m2);
    bool warned = std::find(g_warnings.begin(), g_warnings.end(), "unknown field \"spec.bogus\"") !=
                  g_warnings.end();
    report(c2.ok() && warned, "create with an unknown field: Warning \"unknown field "
                              "\\\"spec.bogus\\\"\" reached the callback: " +
                                  describe(c2) + ", warnings: " + util::join(g_warnings, " | "));

    auto listed = c.list(coll, {"ichor.maesh.dev/test=" + base, "", 1});
    size_t n = listed.ok() ? (*listed)["items"].size() : 0;
    report(listed.ok() && n == 2 && !(*listed)["metadata"].contains("continue"),
           "list with limit=1 follows continue: " + std::to_string(n) +
               " items: " + describe(listed));

    return got.ok() ? doc::get_string(*got, "metadata.resourceVersion") : "";
}

void check_patches(Client& c, const std::string& p1, const std::string& old_rv) {
    auto patched = c.merge_patch(p1, {{"spec", {{"address", "10.9.0.2"}}}});
    report(patched.ok() && doc::get_string(*patched, "spec.address") == "10.9.0.2",
           "merge patch spec.address: " + describe(patched));
    auto stale = c.merge_patch(
        p1, {{"metadata", {{"resourceVersion", old_rv}}}, {"spec", {{"address", "10.9.0.3"}}}});
    report(code_of(stale) == "Conflict",
           "merge patch with a stale resourceVersion: Conflict: " + describe(stale));
    auto invalid = c.merge_patch(p1, {{"spec", {{"role", "banana"}}}});
    report(code_of(invalid) == "Invalid" && invalid.error().kind == ErrorKind::Config,
           "merge patch spec.role=banana: Invalid: " + describe(invalid));

    const std::string m1 = p1.substr(p1.rfind('/') + 1);
    doc::Value intent = {
        {"apiVersion", "ichor.maesh.dev/v1alpha1"},
        {"kind", "TalosMachine"},
        {"metadata", {{"name", m1}}},
        {"spec", {{"cluster", "kube-smoke"}, {"install", {{"disk", "/dev/sda"}}}}}};
    auto applied = c.apply(p1, intent, {"kube-smoke", true, false});
    bool manager = false;
    if (applied.ok()) {
        for (const auto& mf : (*applied)["metadata"]["managedFields"]) {
            manager = manager || (mf.value("manager", "") == "kube-smoke" &&
                                  mf.value("operation", "") == "Apply");
        }
    }
    report(applied.ok() && doc::get_string(*applied, "spec.install.disk") == "/dev/sda" && manager,
           "server-side apply with fieldManager kube-smoke, force: " + describe(applied));

    doc::Value status =
        doc::Value::parse(R"({"status":{"maintenanceFingerprint":"sha256:00","conditions":[
        {"type":"AdoptionHeld","status":"True","lastTransitionTime":"2024-01-01T00:00:00Z","reason":"Held","message":"kube-smoke"}]}})");
    auto st = c.merge_patch_status(p1, status);
    auto after = c.get(p1);
    report(st.ok() && after.ok() &&
               doc::get_string(*after, "status.maintenanceFingerprint") == "sha256:00" &&
               doc::get_string(*after, "spec.address") == "10.9.0.2",
           "merge patch of the status subresource: " + describe(st));
    auto ignored = c.merge_patch(p1, {{"status", {{"maintenanceFingerprint", "sha256:ff"}}}});
    report(ignored.ok() &&
               doc::get_string(*ignored, "status.maintenanceFingerprint") == "sha256:00",
           "status written through the main resource is ignored: " + describe(ignored));
}

// Deletion as the suite does it: only with the allow-delete annotation, pinned to what was read.
void check_delete(Client& c, const std::string& p1, const std::string& old_rv) {
    auto current = c.get(p1);
    bool allowed = current.ok() && (*current)["metadata"]["annotations"].value(
                                       "ichor.maesh.dev/allow-delete", "") == "true";
    std::string uid = current.ok() ? doc::get_string(*current, "metadata.uid") : "";
    std::string rv = current.ok() ? doc::get_string(*current, "metadata.resourceVersion") : "";
    auto wrong_uid =
        c.remove(p1, {"00000000-0000-0000-0000-000000000000", "", "Background", false});
    report(code_of(wrong_uid) == "Conflict",
           "delete with another uid precondition: Conflict: " + describe(wrong_uid));
    auto wrong_rv = c.remove(p1, {uid, old_rv, "Background", false});
    report(code_of(wrong_rv) == "Conflict",
           "delete with a stale resourceVersion precondition: Conflict: " + describe(wrong_rv));
    auto dry = c.remove(p1, {uid, rv, "Background", true});
    report(dry.ok() && c.get(p1).ok(), "dry-run delete keeps the object: " + describe(dry));
    auto deleted =
        allowed
            ? c.remove(p1, {uid, rv, "Background", false})
            : Result<doc::Value>(make_error(ErrorKind::Config, "allow-delete annotation missing"));
    auto gone = c.get(p1);
    report(deleted.ok() && code_of(gone) == "NotFound",
           "delete with uid and resourceVersion preconditions: " + describe(deleted));
}

void check_forbidden(const std::string& state, const Environment& env) {
    LoadOptions lo;
    lo.kubeconfig = state + "/kubeconfig-noaccess";
    auto rc = load_config(lo, env);
    report(rc.ok(), "load " + lo.kubeconfig + ": " + describe(rc));
    if (!rc) {
        return;
    }
    Client c(*rc, env, options());
    auto l = c.list(ichor_path("talosmachines", c.ns()));
    report(!l.ok() && l.error().code == "Forbidden" && l.error().kind == ErrorKind::Config &&
               l.error().hint ==
                   "kubectl auth can-i list talosmachines.ichor.maesh.dev -n ichor-system" &&
               l.error().message.find("lab-noaccess") != std::string::npos,
           "list as lab-noaccess: Forbidden: " + describe(l));
}

std::string json_string(const std::string& s) {
    return doc::Value(s).dump();
}

// A kubeconfig whose user is an exec plugin printing `reply` (written next to it).
std::string write_exec_kubeconfig(const std::string& dir, const RestConfig& admin,
                                  const std::string& api_version, const std::string& reply) {
    std::filesystem::create_directories(dir + "/bin");
    std::ofstream(dir + "/reply.json") << reply;
    std::ofstream(dir + "/bin/plugin.sh")
        << "#!/bin/sh\n"
           "printf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$SMOKE_DIR/exec-info.json\"\n"
           "echo run >> \"$SMOKE_DIR/runs\"\n"
           "cat \"$SMOKE_DIR/reply.json\"\n";
    ::chmod((dir + "/bin/plugin.sh").c_str(), 0755);
    std::ofstream(dir + "/kubeconfig")
        << "apiVersion: v1\nkind: Config\ncurrent-context: exec\n"
        << "clusters:\n- name: lab\n  cluster:\n    server: " << admin.cluster.server
        << "\n    certificate-authority-data: " << util::base64_encode(admin.cluster.ca_pem) << "\n"
        << "users:\n- name: plugin\n  user:\n    exec:\n      command: ./bin/plugin.sh\n"
        << "      apiVersion: " << api_version
        << "\n      interactiveMode: Never\n      provideClusterInfo: true\n"
        << "      installHint: it is written by kube-smoke\n"
        << "      env:\n      - name: SMOKE_DIR\n        value: " << json_string(dir) << "\n"
        << "contexts:\n- name: exec\n  context: {cluster: lab, user: plugin, namespace: "
           "ichor-system}\n";
    return dir + "/kubeconfig";
}

void check_exec(const std::string& state, const RestConfig& admin, const Environment& env) {
    std::string dir = state + "/kube-smoke-exec";
    std::filesystem::remove_all(dir);
    doc::Value reply = {{"apiVersion", "client.authentication.k8s.io/v1"},
                        {"kind", "ExecCredential"},
                        {"status",
                         {{"clientCertificateData", admin.user.client_cert_pem},
                          {"clientKeyData", admin.user.client_key_pem},
                          {"expirationTimestamp", "2100-01-01T00:00:00Z"}}}};
    LoadOptions lo;
    lo.kubeconfig =
        write_exec_kubeconfig(dir, admin, "client.authentication.k8s.io/v1", reply.dump());
    auto rc = load_config(lo, env);
    report(rc.ok() && rc->user.exec, "load the exec kubeconfig: " + describe(rc));
    if (!rc) {
        return;
    }
    Client c(*rc, env, options());
    auto l = c.list(ichor_path("talosmachines", c.ns()));
    report(l.ok(), "list with a client certificate from an exec plugin (v1): " + describe(l));
    auto info = util::read_file(dir + "/exec-info.json");
    auto parsed = info ? doc::parse_one(*info, "exec-info") : Result<doc::Value>(info.error());
    report(parsed.ok() && doc::get_string(*parsed, "spec.cluster.server") == admin.cluster.server &&
               (*parsed)["spec"]["interactive"] == false,
           "KUBERNETES_EXEC_INFO carried spec.cluster.server and interactive=false: " +
               describe(parsed));

    LoadOptions na;
    na.kubeconfig = state + "/kubeconfig-noaccess";
    auto noaccess = load_config(na, env);
    std::string token = noaccess ? noaccess->user.token : "";
    doc::Value token_reply = {{"apiVersion", "client.authentication.k8s.io/v1beta1"},
                              {"kind", "ExecCredential"},
                              {"status", {{"token", token}}}};
    std::filesystem::remove_all(dir);
    lo.kubeconfig = write_exec_kubeconfig(dir, admin, "client.authentication.k8s.io/v1beta1",
                                          token_reply.dump());
    auto trc = load_config(lo, env);
    if (!trc) {
        report(false, "load the token exec kubeconfig: " + describe(trc));
        return;
    }
    Client tc(*trc, env, options());
    auto tl = tc.list(ichor_path("talosmachines", tc.ns()));
    report(!tl.ok() && tl.error().code == "Forbidden",
           "list with the no-access token from an exec plugin (v1beta1): Forbidden: " +
               describe(tl));

    // A token the API server rejects: the plugin runs once more, then the 401 is an error.
    std::filesystem::remove_all(dir);
    token_reply["status"]["token"] = "not-a-valid-token";
    lo.kubeconfig = write_exec_kubeconfig(dir, admin, "client.authentication.k8s.io/v1beta1",
                                          token_reply.dump());
    Client bad(*load_config(lo, env), env, options());
    auto ul = bad.list(ichor_path("talosmachines", bad.ns()));
    auto runs = util::read_file(dir + "/runs");
    report(code_of(ul) == "Unauthorized" && ul.error().kind == ErrorKind::Config && runs.ok() &&
               *runs == "run\nrun\n",
           "401 with an exec plugin: plugin run twice, then Unauthorized: " + describe(ul));
    std::filesystem::remove_all(dir);
}

// KUBECONFIG=missing:noaccess:admin: both define context, cluster and user "lab"; the no-access
// file comes first and wins whole entries.
void check_merge(const std::string& state, const Environment& env) {
    Environment merged = env;
    merged.vars["KUBECONFIG"] =
        state + "/missing-kubeconfig:" + state + "/kubeconfig-noaccess:" + state + "/kubeconfig";
    auto rc = load_config({}, merged);
    if (!rc) {
        report(false, "load KUBECONFIG=missing:noaccess:admin: " + describe(rc));
        return;
    }
    Client c(*rc, merged, options());
    auto l = c.list(ichor_path("talosmachines", c.ns()));
    report(rc->user.client_cert_pem.empty() && code_of(l) == "Forbidden",
           "KUBECONFIG=missing:noaccess:admin: the first file's user wins whole: " + describe(l));
}

void check_transport(const RestConfig& admin, const Environment& env) {
    const std::string path = ichor_path("talosmachines", admin.ns);
    RestConfig named = admin;
    named.cluster.tls_server_name = "kubernetes.default.svc";
    Client c1(named, env, options());
    auto ok = c1.list(path);
    report(ok.ok(),
           "tls-server-name kubernetes.default.svc (in the server certificate): " + describe(ok));

    named.cluster.tls_server_name = "not-in-the-certificate";
    Client c2(named, env, options());
    auto wrong = c2.list(path);
    report(code_of(wrong) == "TLSVerifyFailed" && wrong.error().kind == ErrorKind::Config,
           "tls-server-name not in the certificate: " + describe(wrong));

    RestConfig system_roots = admin;
    system_roots.cluster.ca_pem.clear();
    Client c3(system_roots, env, options());
    auto untrusted = c3.list(path);
    report(code_of(untrusted) == "TLSVerifyFailed",
           "the lab CA is not in the system trust store: " + describe(untrusted));

    RestConfig closed = admin;
    closed.cluster.server = "https://127.0.0.1:1";
    Client c4(closed, env, options());
    auto unreachable = c4.list(path);
    report(code_of(unreachable) == "Unreachable" &&
               unreachable.error().kind == ErrorKind::Unreachable &&
               util::starts_with(unreachable.error().message,
                                 "cannot reach the Kubernetes API at https://127.0.0.1:1: "),
           "closed port: " + describe(unreachable));
}

} // namespace

int main() {
    Environment env = process_env();
    std::string state = env.get_or("ICHOR_LAB_STATE", "");
    if (state.empty() || env.get_or("KUBECONFIG", "").empty()) {
        std::cerr << "kube-smoke: set KUBECONFIG and ICHOR_LAB_STATE (eval \"$(tests/lab/up)\")\n";
        return 2;
    }
    LoadOptions lo;
    lo.warn = [](std::string_view w) { std::cerr << "kube-smoke: warning: " << w << "\n"; };
    auto admin = load_config(lo, env);
    if (!admin) {
        std::cerr << "kube-smoke: " << describe(admin) << "\n";
        return 2;
    }
    std::cout << "server " << admin->cluster.server << ", context " << admin->context
              << ", namespace " << admin->ns << "\n";
    Client c(*admin, env, options());
    const std::string base = "kube-smoke-" + std::to_string(::getpid());
    const std::string p1 = ichor_path("talosmachines", c.ns(), base + "-1");
    std::string first_rv = check_create_get_list(c, base);
    check_patches(c, p1, first_rv);
    check_delete(c, p1, first_rv);
    (void)c.remove(ichor_path("talosmachines", c.ns(), base + "-2"));
    check_forbidden(state, env);
    check_exec(state, *admin, env);
    check_merge(state, env);
    check_transport(*admin, env);
    std::cout << (g_failures == 0 ? "all checks passed\n" : "some checks failed\n");
    return g_failures == 0 ? 0 : 1;
}
