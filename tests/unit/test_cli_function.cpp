// A tool as a KRM function (common/cli/function.cpp, run_tool in run.cpp; the functionConfig of
// doc::ResourceList; under kpt, write_list's files for new items).
#include "common/cli/function.h"
#include "common/cli/output.h"
#include "common/cli/run.h"
#include "common/doc/resource_list.h"

#include <catch2/catch.hpp>

#include <iterator>
#include <sstream>

using namespace ichor;

namespace {

doc::Value parse(const std::string& text) {
    auto v = doc::parse_one(text, "test");
    REQUIRE(v.ok());
    return *v;
}

// What kpt fn eval DIR --exec ./fn -- cluster=prod add-machine=true sends (kpt 1.0.0-beta.56).
const char* k_kpt_input = R"(apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: adopt.ichor.maesh.dev/v1alpha1
  kind: Inspection
  metadata:
    name: 10.0.0.21
    annotations:
      config.kubernetes.io/index: '0'
      config.kubernetes.io/path: 'trusted.yaml'
functionConfig:
  metadata:
    name: function-input
  data: {cluster: prod, add-machine: "true"}
  kind: ConfigMap
  apiVersion: v1
)";

// The fake tool: records what it was given, echoes its input's items and fails when asked.
struct Seen {
    std::vector<std::string> args;
    std::string input;
    bool in_tty = true;
    std::string verb;
};
Seen seen;

stages::Outcome recording_tool(const std::vector<std::string>& args, cli::Streams& s) {
    seen.args = args;
    seen.input.assign(std::istreambuf_iterator<char>(s.in), std::istreambuf_iterator<char>());
    seen.in_tty = s.in_tty;
    seen.verb = s.verb;
    for (const auto& a : args) {
        if (a.rfind("--bad", 0) == 0) {
            return stages::failed(
                cli::usage_error("--cluster is required", "kubectl ichor drift --cluster NAME"));
        }
    }
    return {};
}

struct Run {
    std::istringstream in;
    std::ostringstream out;
    std::ostringstream err;
    cli::Streams s{in, out, err};
    explicit Run(std::string input, bool tty = false) : in(std::move(input)) { s.in_tty = tty; }
};

} // namespace

TEST_CASE("a ResourceList keeps its functionConfig out of the items and writes it back",
          "[cli][function][doc]") {
    auto list = doc::read_resource_list(k_kpt_input, "stdin");
    REQUIRE(list.ok());
    REQUIRE(list->items.size() == 1);
    CHECK(list->items[0]["kind"] == "Inspection");
    CHECK(list->function_config["kind"] == "ConfigMap");
    CHECK(list->function_config["data"]["cluster"] == "prod");
    doc::Value v = list->to_value();
    CHECK(v["functionConfig"] == list->function_config);
    CHECK(v["items"].size() == 1);

    auto plain = doc::read_resource_list("apiVersion: v1\nkind: List\nitems: []\n", "stdin");
    REQUIRE(plain.ok());
    CHECK(plain->function_config.is_null());
    CHECK_FALSE(plain->to_value().contains("functionConfig"));
}

TEST_CASE("a functionConfig's data are flags", "[cli][function]") {
    auto flags = cli::function_config_flags(
        parse("kind: ConfigMap\napiVersion: v1\ndata:\n  cluster: prod\n  add-machine: 'true'\n"
              "  yes: 'false'\n  n: team-a\n  machine: a,b\n  cluster-file: c.yaml\n"));
    REQUIRE(flags.ok());
    CHECK(*flags == std::vector<std::string>{"--cluster=prod", "--add-machine=true", "-n", "team-a",
                                             "--machine=a,b", "--cluster-file=c.yaml"});
    // A YAML-typed value (a hand-written functionConfig file) reads as its text.
    auto typed = cli::function_config_flags(
        parse("kind: ConfigMap\ndata: {concurrency: 4, add-machine: true, yes: false}\n"));
    REQUIRE(typed.ok());
    CHECK(*typed == std::vector<std::string>{"--concurrency=4", "--add-machine=true"});
    auto empty = cli::function_config_flags(parse("kind: ConfigMap\ndata: {}\n"));
    REQUIRE(empty.ok());
    CHECK(empty->empty());
    auto none = cli::function_config_flags(parse("kind: ConfigMap\nmetadata: {name: x}\n"));
    REQUIRE(none.ok());
    CHECK(none->empty());
}

TEST_CASE("a functionConfig that is not a ConfigMap of flags is a usage error", "[cli][function]") {
    auto other = cli::function_config_flags(parse("kind: SetNamespace\nspec: {namespace: a}\n"));
    REQUIRE_FALSE(other.ok());
    CHECK(other.error().kind == ErrorKind::Usage);
    CHECK(other.error().message.find("a ConfigMap is expected") != std::string::npos);
    auto key = cli::function_config_flags(parse("kind: ConfigMap\ndata: {--cluster: prod}\n"));
    REQUIRE_FALSE(key.ok());
    CHECK(key.error().message == "functionConfig: \"--cluster\" is not a flag's name (lower case, "
                                 "digits and '-')");
    auto upper = cli::function_config_flags(parse("kind: ConfigMap\ndata: {Cluster: prod}\n"));
    CHECK_FALSE(upper.ok());
    auto list = cli::function_config_flags(parse("kind: ConfigMap\ndata: {machine: [a, b]}\n"));
    REQUIRE_FALSE(list.ok());
    CHECK(list.error().message.find("the value of machine is not a string") != std::string::npos);
}

TEST_CASE("run_tool gives a tool started by kpt its functionConfig's flags and the same input",
          "[cli][function][run]") {
    Run r(k_kpt_input);
    CHECK(cli::run_tool({"kubectl-ichor-drift"}, r.s, "drift", recording_tool) == 0);
    CHECK(seen.args ==
          std::vector<std::string>{"kubectl-ichor-drift", "--cluster=prod", "--add-machine=true"});
    CHECK(seen.input == k_kpt_input);
    CHECK_FALSE(seen.in_tty);
    CHECK(seen.verb == "drift");
}

TEST_CASE("run_tool leaves the input alone when there is no functionConfig or it may not look",
          "[cli][function][run]") {
    const std::string plain = "apiVersion: v1\nkind: List\nitems: []\n";
    Run none(plain);
    CHECK(cli::run_tool({"kubectl-ichor-drift"}, none.s, "drift", recording_tool) == 0);
    CHECK(seen.args == std::vector<std::string>{"kubectl-ichor-drift"});
    CHECK(seen.input == plain);

    // Arguments given: the flags are the command line's alone; the tool reads stdin itself.
    Run args(k_kpt_input);
    CHECK(cli::run_tool({"kubectl-ichor-drift", "--cluster", "dev"}, args.s, "drift",
                        recording_tool) == 0);
    CHECK(seen.args == std::vector<std::string>{"kubectl-ichor-drift", "--cluster", "dev"});
    CHECK(seen.input == k_kpt_input);

    // A terminal on stdin is never read ahead (the tool refuses to wait on it itself).
    Run tty(k_kpt_input, true);
    CHECK(cli::run_tool({"kubectl-ichor-drift"}, tty.s, "drift", recording_tool) == 0);
    CHECK(seen.args == std::vector<std::string>{"kubectl-ichor-drift"});
    CHECK(seen.in_tty);

    // The dispatcher (no verb) passes everything on to the tool it runs.
    CHECK_FALSE(cli::may_run_as_function({"kubectl-ichor"}, none.s, ""));

    // An input that does not parse reaches the tool as it was.
    Run broken("items: [\n");
    CHECK(cli::run_tool({"kubectl-ichor-drift"}, broken.s, "drift", recording_tool) == 0);
    CHECK(seen.input == "items: [\n");
}

TEST_CASE("under kpt a usage error's hint says how flags are written", "[cli][function][run]") {
    std::string input = k_kpt_input;
    input.replace(input.find("cluster: prod"), 13, "bad: ''");
    Run r(input);
    CHECK(cli::run_tool({"kubectl-ichor-drift"}, r.s, "drift", recording_tool) == 2);
    CHECK(r.err.str() ==
          "kubectl ichor drift: error: --cluster is required\n"
          "hint: kubectl ichor drift --cluster NAME; as a KRM function, a flag --KEY VALUE is "
          "KEY=VALUE in the functionConfig (kpt fn eval DIR --exec kubectl-ichor-drift -- "
          "cluster=NAME)\n");

    Run other(std::string(k_kpt_input)
                  .replace(std::string(k_kpt_input).find("kind: ConfigMap"), 15, "kind: Other"));
    CHECK(cli::run_tool({"kubectl-ichor-drift"}, other.s, "drift", recording_tool) == 2);
    CHECK(other.err.str().find("error: functionConfig: a ConfigMap is expected") !=
          std::string::npos);
}

TEST_CASE("under kpt every new item gets the file kpt would give it", "[cli][function][output]") {
    auto list = doc::read_resource_list(k_kpt_input, "stdin");
    REQUIRE(list.ok());
    list->items.push_back(parse("apiVersion: ichor.maesh.dev/v1alpha1\nkind: TalosMachine\n"
                                "metadata: {name: w-2, namespace: ichor-system}\n"));
    list->items.push_back(parse("apiVersion: ichor.maesh.dev/v1alpha1\nkind: TalosConfigPatch\n"
                                "metadata: {name: w-2-adopted, namespace: ichor-system}\n"));
    list->items.push_back(parse("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n"));
    Run r("");
    REQUIRE(cli::write_list(r.s, cli::OutputOptions{}, *list, nullptr).ok());
    auto out = doc::read_resource_list(r.out.str(), "stdout");
    REQUIRE(out.ok());
    REQUIRE(out->items.size() == 4);
    CHECK(out->items[0]["metadata"]["annotations"]["config.kubernetes.io/path"] == "trusted.yaml");
    CHECK(out->items[1]["metadata"]["annotations"]["config.kubernetes.io/path"] ==
          "ichor-system/talosmachine_w-2.yaml");
    CHECK(out->items[2]["metadata"]["annotations"]["config.kubernetes.io/path"] ==
          "ichor-system/talosconfigpatch_w-2-adopted.yaml");
    CHECK(out->items[3]["metadata"]["annotations"]["config.kubernetes.io/path"] ==
          "namespace_a.yaml");
    CHECK(out->function_config == list->function_config);

    // Without an orchestrator the objects stay exactly as planned.
    list->function_config = doc::Value();
    Run plain("");
    REQUIRE(cli::write_list(plain.s, cli::OutputOptions{}, *list, nullptr).ok());
    auto same = doc::read_resource_list(plain.out.str(), "stdout");
    REQUIRE(same.ok());
    CHECK_FALSE(same->items[1]["metadata"].contains("annotations"));
}
