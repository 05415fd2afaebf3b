#include "common/kube/config.h"
#include "common/kube/paths.h"
#include "common/kube/transport.h"
#include "common/util/strings.h"
#include "test_kube_support.h"

#include <catch2/catch.hpp>

using namespace ichor;
using namespace ichor::kube;
using ichor::kube::testing::TempDir;

namespace {

const char* const k_file_a = R"(apiVersion: v1
kind: Config
current-context: ctx-a
clusters:
- name: c1
  cluster:
    server: https://a.example:6443
users:
- name: u1
  user:
    token: token-from-a
contexts:
- name: ctx-a
  context: {cluster: c1, user: u1, namespace: team-a}
- name: shared
  context: {cluster: c1, user: u1}
)";

const char* const k_file_b = R"(apiVersion: v1
kind: Config
current-context: ctx-b
clusters:
- name: c1
  cluster:
    server: https://b.example:6443
- name: c2
  cluster:
    server: https://c2.example:6443
    insecure-skip-tls-verify: true
users:
- name: u1
  user:
    tokenFile: never-read
    as: someone
- name: u2
  user:
    token: token-u2
contexts:
- name: ctx-b
  context: {cluster: c2, user: u2}
- name: shared
  context: {cluster: c2, user: u2, namespace: from-b}
)";

Environment env_with(std::initializer_list<std::pair<const std::string, std::string>> vars) {
    Environment e;
    e.vars = vars;
    return e;
}

} // namespace

TEST_CASE("KUBECONFIG: first file wins whole entries, missing files skipped", "[kube][config]") {
    TempDir t;
    std::string a = t.write("a.yaml", k_file_a);
    std::string b = t.write("b.yaml", k_file_b);
    auto env =
        env_with({{"KUBECONFIG", a + "::" + t.path() + "/missing.yaml:" + b}, {"HOME", t.path()}});

    auto merged = merge_kubeconfigs(kubeconfig_files({}, env), true);
    REQUIRE(merged.ok());
    CHECK(merged->files == std::vector<std::string>{a, b});
    CHECK(merged->current_context == "ctx-a");
    CHECK(merged->clusters.at("c1").file == a);
    CHECK(merged->clusters.at("c2").file == b);
    // u1 is taken whole from a: b's tokenFile and `as` are not merged into it
    CHECK_FALSE(merged->users.at("u1").value.contains("tokenFile"));
    CHECK_FALSE(merged->users.at("u1").value.contains("as"));

    auto rc = load_config({}, env);
    REQUIRE(rc.ok());
    CHECK(rc->context == "ctx-a");
    CHECK(rc->cluster.server == "https://a.example:6443");
    CHECK(rc->user.token == "token-from-a");
    CHECK(rc->user.impersonate.empty());
    CHECK(rc->ns == "team-a");

    LoadOptions o;
    o.context = "shared"; // defined in both: a's wins whole, with no namespace
    auto shared = load_config(o, env);
    REQUIRE(shared.ok());
    CHECK(shared->cluster.name == "c1");
    CHECK(shared->ns == "ichor-system");
}

TEST_CASE("KUBECONFIG: current-context comes from the first file that sets it", "[kube][config]") {
    TempDir t;
    std::string empty = t.write("empty.yaml", "apiVersion: v1\nkind: Config\n");
    std::string b = t.write("b.yaml", k_file_b);
    auto rc = load_config({}, env_with({{"KUBECONFIG", empty + ":" + b}}));
    REQUIRE(rc.ok());
    CHECK(rc->context == "ctx-b");
    CHECK(rc->cluster.server == "https://c2.example:6443");
    CHECK(rc->cluster.insecure_skip_tls_verify);
    CHECK(rc->user.token == "token-u2");
}

TEST_CASE("kubeconfig selection: --kubeconfig, KUBECONFIG, ~/.kube/config", "[kube][config]") {
    TempDir t;
    std::string a = t.write("a.yaml", k_file_a);
    std::string b = t.write("b.yaml", k_file_b);
    t.write("home/.kube/config", k_file_b);

    LoadOptions only_a;
    only_a.kubeconfig = a;
    auto rc = load_config(only_a, env_with({{"KUBECONFIG", b}}));
    REQUIRE(rc.ok());
    CHECK(rc->source == "kubeconfig " + a);
    CHECK(rc->context == "ctx-a");

    auto home = load_config({}, env_with({{"HOME", t.path() + "/home"}}));
    REQUIRE(home.ok());
    CHECK(home->context == "ctx-b");

    LoadOptions missing;
    missing.kubeconfig = t.path() + "/nope.yaml";
    auto e = load_config(missing, env_with({{"KUBECONFIG", b}}));
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().kind == ErrorKind::Config);
    CHECK(e.error().message ==
          "kubeconfig: open " + t.path() + "/nope.yaml: No such file or directory");

    auto none = load_config({}, env_with({{"KUBECONFIG", t.path() + "/x:" + t.path() + "/y"}}));
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().message == "no kubeconfig: none of the files in KUBECONFIG exist (" +
                                      t.path() + "/x, " + t.path() + "/y)");
    CHECK(none.error().hint == "pass --kubeconfig FILE or set KUBECONFIG");

    std::string bad = t.write("bad.yaml", "clusters: [\n");
    auto unparsable = load_config({}, env_with({{"KUBECONFIG", bad + ":" + a}}));
    REQUIRE_FALSE(unparsable.ok());
    CHECK(unparsable.error().kind == ErrorKind::Config);
    CHECK(util::starts_with(unparsable.error().message, "kubeconfig: " + bad));
}

TEST_CASE("context and namespace selection", "[kube][config]") {
    TempDir t;
    std::string a = t.write("a.yaml", k_file_a);
    auto env = env_with({{"KUBECONFIG", a}});

    LoadOptions o;
    o.ns = "explicit";
    auto rc = load_config(o, env);
    REQUIRE(rc.ok());
    CHECK(rc->ns == "explicit");

    o = {};
    o.context = "nope";
    auto e = load_config(o, env);
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().kind == ErrorKind::Config);
    CHECK(e.error().message == "kubeconfig " + a + ": context \"nope\" not found");
    CHECK(e.error().hint == "kubectl config get-contexts");

    std::string no_current =
        t.write("nc.yaml", "contexts:\n- name: x\n  context: {cluster: c, user: u}\n");
    auto nc = load_config({}, env_with({{"KUBECONFIG", no_current}}));
    REQUIRE_FALSE(nc.ok());
    CHECK(nc.error().message == "kubeconfig " + no_current + ": current-context is not set");

    std::string dangling =
        t.write("d.yaml",
                "current-context: x\ncontexts:\n- name: x\n  context: {cluster: gone, user: u}\n");
    auto d = load_config({}, env_with({{"KUBECONFIG", dangling}}));
    REQUIRE_FALSE(d.ok());
    CHECK(d.error().message ==
          "kubeconfig " + dangling +
              ": contexts[x].context.cluster: cluster \"gone\" is not defined");
    CHECK(d.error().hint == "kubectl config get-clusters");
}

TEST_CASE("relative paths resolve against the kubeconfig's own folder", "[kube][config]") {
    TempDir t;
    t.write("cfg/pki/ca.crt", "CA PEM\n");
    t.write("cfg/pki/admin.crt", "CERT PEM\n");
    t.write("cfg/pki/admin.key", "KEY PEM\n");
    t.write("cfg/token", "  tok-from-file\n");
    std::string kc = t.write("cfg/kubeconfig", R"(current-context: c
clusters:
- name: k
  cluster:
    server: https://10.0.0.1:6443/
    certificate-authority: pki/ca.crt
    tls-server-name: kubernetes
    proxy-url: socks5://proxy:1080
users:
- name: cert
  user:
    client-certificate: pki/admin.crt
    client-key: ./pki/admin.key
- name: tok
  user:
    tokenFile: token
contexts:
- name: c
  context: {cluster: k, user: cert}
- name: t
  context: {cluster: k, user: tok}
)");
    auto rc = load_config({}, env_with({{"KUBECONFIG", kc}}));
    REQUIRE(rc.ok());
    CHECK(rc->cluster.server == "https://10.0.0.1:6443");
    CHECK(rc->cluster.ca_pem == "CA PEM\n");
    CHECK(rc->cluster.tls_server_name == "kubernetes");
    CHECK(rc->cluster.proxy_url == "socks5://proxy:1080");
    CHECK(rc->user.client_cert_pem == "CERT PEM\n");
    CHECK(rc->user.client_key_pem == "KEY PEM\n");

    LoadOptions o;
    o.context = "t";
    auto tok = load_config(o, env_with({{"KUBECONFIG", kc}}));
    REQUIRE(tok.ok());
    CHECK(tok->user.token == "tok-from-file");
}

TEST_CASE("inline data wins over files, broken fields are named", "[kube][config]") {
    TempDir t;
    std::string ca64 = util::base64_encode("INLINE CA\n");
    std::string kc = t.write(
        "kc", "current-context: c\nclusters:\n- name: k\n  cluster:\n    server: https://h\n"
              "    certificate-authority: missing.crt\n    certificate-authority-data: " +
                  ca64 + "\nusers:\n- name: u\n  user:\n    client-certificate-data: " +
                  util::base64_encode("C") +
                  "\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\n");
    std::vector<std::string> warnings;
    LoadOptions o;
    o.warn = [&](std::string_view w) { warnings.emplace_back(w); };
    auto rc = load_config(o, env_with({{"KUBECONFIG", kc}}));
    REQUIRE_FALSE(rc.ok()); // the certificate has no key
    CHECK(rc.error().message ==
          "kubeconfig " + kc + ": users[u].user: client-certificate is set without client-key");
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0] ==
          "kubeconfig " + kc +
              ": clusters[k].cluster: certificate-authority-data and "
              "certificate-authority are both set; certificate-authority-data is used");

    std::string kc2 = t.write(
        "kc2", "current-context: c\nclusters:\n- name: k\n  cluster:\n    server: https://h\n"
               "users:\n- name: u\n  user:\n    tokenFile: no-such-token\n"
               "contexts:\n- name: c\n  context: {cluster: k, user: u}\n");
    auto e = load_config({}, env_with({{"KUBECONFIG", kc2}}));
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().kind == ErrorKind::Config);
    CHECK(e.error().message == "kubeconfig " + kc2 + ": users[u].user.tokenFile: open " + t.path() +
                                   "/no-such-token: No such file or directory");

    std::string kc3 = t.write(
        "kc3", "current-context: c\nclusters:\n- name: k\n  cluster:\n    server: https://h\n"
               "    insecure-skip-tls-verify: true\n    certificate-authority-data: " +
                   ca64 +
                   "\nusers:\n- name: u\n  user: {}\ncontexts:\n- name: c\n  context: {cluster: k, "
                   "user: u}\n");
    auto both = load_config({}, env_with({{"KUBECONFIG", kc3}}));
    REQUIRE_FALSE(both.ok());
    CHECK(both.error().message == "kubeconfig " + kc3 +
                                      ": clusters[k].cluster: certificate-authority and "
                                      "insecure-skip-tls-verify cannot be used together");
}

TEST_CASE("exec configuration is validated at load", "[kube][config]") {
    TempDir t;
    auto kc_with = [&](const std::string& exec) {
        return t.write("kc",
                       "current-context: c\nclusters:\n- name: k\n  cluster: {server: https://h}\n"
                       "users:\n- name: u\n  user:\n    exec:\n" +
                           exec + "contexts:\n- name: c\n  context: {cluster: k, user: u}\n");
    };
    std::string kc =
        kc_with("      command: plug\n      apiVersion: client.authentication.k8s.io/v1beta1\n"
                "      args: [a, b]\n      env:\n      - {name: X, value: '1'}\n"
                "      installHint: get plug\n      provideClusterInfo: true\n");
    auto rc = load_config({}, env_with({{"KUBECONFIG", kc}}));
    REQUIRE(rc.ok());
    REQUIRE(rc->user.exec);
    CHECK(rc->user.exec->interactive_mode == "IfAvailable");
    CHECK(rc->user.exec->args == std::vector<std::string>{"a", "b"});
    CHECK(rc->user.exec->env.at(0) == std::make_pair(std::string("X"), std::string("1")));
    CHECK(rc->user.exec->base_dir == t.path());
    CHECK(rc->user.exec->provide_cluster_info);

    kc = kc_with("      command: plug\n      apiVersion: client.authentication.k8s.io/v1\n");
    auto v1 = load_config({}, env_with({{"KUBECONFIG", kc}}));
    REQUIRE_FALSE(v1.ok());
    CHECK(v1.error().message ==
          "kubeconfig " + kc +
              ": users[u].user.exec.interactiveMode: required by "
              "client.authentication.k8s.io/v1 (Never, IfAvailable or Always)");

    kc = kc_with("      command: plug\n      apiVersion: client.authentication.k8s.io/v1alpha1\n");
    auto old = load_config({}, env_with({{"KUBECONFIG", kc}}));
    REQUIRE_FALSE(old.ok());
    CHECK(
        old.error().message ==
        "kubeconfig " + kc +
            ": users[u].user.exec.apiVersion: \"client.authentication."
            "k8s.io/v1alpha1\" is not supported (use client.authentication.k8s.io/v1 or v1beta1)");
}

TEST_CASE("in-cluster config when no kubeconfig exists", "[kube][config]") {
    TempDir t;
    t.write("sa/token", "sa-token\n");
    t.write("sa/ca.crt", "SA CA\n");
    t.write("sa/namespace", "pods-ns\n");
    LoadOptions o;
    o.service_account_dir = t.path() + "/sa";
    auto env = env_with({{"HOME", t.path()},
                         {"KUBERNETES_SERVICE_HOST", "fd00::1"},
                         {"KUBERNETES_SERVICE_PORT", "443"}});
    auto rc = load_config(o, env);
    REQUIRE(rc.ok());
    CHECK(rc->source == "in-cluster config");
    CHECK(rc->cluster.server == "https://[fd00::1]:443");
    CHECK(rc->cluster.ca_pem == "SA CA\n");
    CHECK(rc->user.token == "sa-token");
    CHECK(rc->ns == "pods-ns");

    env.vars["POD_NAMESPACE"] = "from-env";
    CHECK(load_config(o, env)->ns == "from-env");
    o.ns = "explicit";
    CHECK(load_config(o, env)->ns == "explicit");

    o.context = "some"; // an explicit context means a kubeconfig is wanted
    auto e = load_config(o, env);
    REQUIRE_FALSE(e.ok());
    CHECK(util::starts_with(e.error().message, "no kubeconfig: "));
}

TEST_CASE("resource paths", "[kube][paths]") {
    CHECK(ichor_path("talosmachines", "ichor-system", "m1") ==
          "/apis/ichor.maesh.dev/v1alpha1/namespaces/ichor-system/talosmachines/m1");
    CHECK(ichor_path("talosclusters", "ns") ==
          "/apis/ichor.maesh.dev/v1alpha1/namespaces/ns/talosclusters");
    CHECK(secret_path("ns", "bundle") == "/api/v1/namespaces/ns/secrets/bundle");
    CHECK(resource_path("", "v1", "events", "ns") == "/api/v1/namespaces/ns/events");
    CHECK(resource_path("apiextensions.k8s.io", "v1", "customresourcedefinitions", "", "x") ==
          "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x");
    CHECK(status_path(ichor_path("talosmachines", "n", "m")) ==
          "/apis/ichor.maesh.dev/v1alpha1/namespaces/n/talosmachines/m/status");
    doc::Value obj = {{"apiVersion", "ichor.maesh.dev/v1alpha1"}, {"metadata", {{"name", "m2"}}}};
    CHECK(object_path(obj, "talosmachines", "dflt") ==
          "/apis/ichor.maesh.dev/v1alpha1/namespaces/dflt/talosmachines/m2");
    doc::Value secret = {{"apiVersion", "v1"}, {"metadata", {{"name", "s"}, {"namespace", "x"}}}};
    CHECK(object_path(secret, "secrets", "dflt") == "/api/v1/namespaces/x/secrets/s");
    CHECK(query_string({{"labelSelector", "a=b,c in (d)"}, {"continue", ""}, {"limit", "5"}}) ==
          "?labelSelector=a%3Db%2Cc%20in%20%28d%29&limit=5");
    CHECK(query_string({}).empty());
}

TEST_CASE("server URL, tls-server-name and proxy choice", "[kube][transport]") {
    auto u = parse_server_url("https://[::1]:6443/prefix/");
    REQUIRE(u);
    CHECK(u->host == "::1");
    CHECK(u->port == "6443");
    CHECK(u->prefix == "/prefix");
    CHECK(u->host_port() == "[::1]:6443");
    CHECK(parse_server_url("https://h")->port == "443");
    CHECK_FALSE(parse_server_url("nohost"));

    ClusterConfig c;
    c.tls_server_name = "kubernetes.default";
    auto t = request_target(*parse_server_url("https://10.1.2.3:6443"), c, "/api");
    CHECK(t.url == "https://kubernetes.default:6443/api");
    CHECK(t.connect_to == "kubernetes.default:6443:10.1.2.3:6443");
    CHECK(t.host_header == "Host: 10.1.2.3:6443");

    Environment env = env_with({{"HTTPS_PROXY", "http://proxy:3128"}, {"no_proxy", ".corp"}});
    ClusterConfig plain;
    auto p = choose_proxy(*parse_server_url("https://api.example:6443"), plain, env);
    CHECK(p.proxy == "http://proxy:3128");
    CHECK(p.no_proxy == ".corp");
    CHECK(choose_proxy(*parse_server_url("https://127.0.0.1:6443"), plain, env).proxy.empty());
    CHECK(choose_proxy(*parse_server_url("https://localhost:6443"), plain, env).proxy.empty());
    CHECK(choose_proxy(*parse_server_url("http://api.example"), plain, env).proxy.empty());
    ClusterConfig with_proxy;
    with_proxy.proxy_url = "socks5://s:1080";
    auto q = choose_proxy(*parse_server_url("https://127.0.0.1:6443"), with_proxy, env);
    CHECK(q.proxy == "socks5://s:1080");
    CHECK(q.no_proxy.empty());
}
