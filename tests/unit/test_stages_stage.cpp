// run_stage (common/stages/stage.h): the results a stage adds are tagged with it, and the list
// records that the stage ran over it here, so that cli::write_list echoes only its findings.
#include "common/stages/stage.h"

#include <catch2/catch.hpp>

using namespace ichor;
using doc::Value;

TEST_CASE("run_stage tags its results and records the stage in stages_run", "[stages][stage]") {
    doc::ResourceList list;
    Value tags = Value::object();
    tags[std::string(vocab::k_tag_stage)] = "inspect";
    list.add_result(doc::Severity::Error, "from an earlier tool", "Earlier", nullptr, tags);
    stages::run_stage("trustcheck", list, [&] {
        list.add_result(doc::Severity::Warning, "mine", "Mine");
        return stages::Outcome{};
    });
    REQUIRE(list.results.size() == 2);
    CHECK(list.results[0]["tags"][std::string(vocab::k_tag_stage)] == "inspect");
    CHECK(list.results[1]["tags"][std::string(vocab::k_tag_stage)] == "trustcheck");
    CHECK(list.stages_run == std::vector<std::string>{"trustcheck"});

    SECTION("a second stage adds its name once; a body that replaces the list keeps the record") {
        stages::run_stage("drift", list, [&] {
            list = doc::ResourceList{}; // e.g. a stage that rebuilds the list
            return stages::Outcome{};
        });
        stages::run_stage("drift", list, [] { return stages::Outcome{}; });
        CHECK(list.stages_run == std::vector<std::string>{"trustcheck", "drift"});
    }
    SECTION("note_stages_run carries the record into another list") {
        doc::ResourceList out;
        stages::note_stages_run(out, list.stages_run);
        stages::note_stages_run(out, {"trustcheck", "hold-release"});
        CHECK(out.stages_run == std::vector<std::string>{"trustcheck", "hold-release"});
    }
}

TEST_CASE("a list read from a stream has run no stage", "[stages][stage]") {
    auto list = doc::read_resource_list("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"
                                        "items: []\nresults:\n- severity: error\n  message: x\n"
                                        "  tags: {ichor.maesh.dev/stage: drift}\n",
                                        "<test>");
    REQUIRE(list);
    CHECK(list->stages_run.empty());
}
