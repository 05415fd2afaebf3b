// The Ichor objects of one namespace in memory (stages::IchorObjects), shared by the tests of the
// stages that write them: hold apply, release and abort (test_stages_hold.cpp) and the adoption's
// flow (test_stages_adopt.cpp).
#pragma once

#include "common/doc/value.h"
#include "common/doc/vocabulary.h"
#include "common/stages/objects.h"
#include "common/stages/reporter.h"
#include "common/util/clock.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ichor::test {

using doc::Value;

// The stages' clock in the tests: time passes when a stage pauses, nothing sleeps.
class FakeClock final : public util::Clock {
  public:
    std::int64_t now = 1000;
    std::vector<std::int64_t> slept; // each pause, in the order asked
    std::string now_rfc3339() override { return "2025-03-04T05:06:07Z"; }
    std::int64_t monotonic_ms() override { return now; }
    void sleep_ms(std::int64_t ms) override {
        slept.push_back(ms);
        now += ms;
    }
};

// One call on the fake, in the order made.
struct Call {
    std::string verb;   // list, get, create, merge_patch, remove
    std::string plural; // talosmachines, talosconfigpatches
    std::string name;   // the object's name (list: the label selector)
    Value body;         // create: the object; merge_patch: the patch; remove: the uid
};

// The Ichor objects of one namespace, in memory, in the order they were made. create refuses an
// object that exists (AlreadyExists); get, merge_patch and remove refuse one that does not
// (NotFound). A failure can be injected for any "VERB PLURAL/NAME". The controller is faked too:
// a TalosMachine whose hold is removed becomes Ready, unless its name is in `never_ready`.
class FakeObjects final : public stages::IchorObjects {
  public:
    std::vector<std::pair<std::string, Value>> objects; // plural, object
    std::vector<Call> calls;
    std::map<std::string, Error> fail;
    std::set<std::string> never_ready;
    // Called before each create, merge_patch and remove, as "VERB PLURAL/NAME".
    std::function<void(const std::string&)> before_write;

    [[nodiscard]] const std::string& ns() const override { return m_ns; }

    void add(const std::string& plural, Value obj) {
        obj["metadata"]["namespace"] = m_ns;
        obj["metadata"]["uid"] = "uid-" + doc::get_string(obj, "metadata.name");
        objects.emplace_back(plural, std::move(obj));
    }
    Value* find(const std::string& plural, const std::string& name) {
        for (auto& [p, o] : objects) {
            if (p == plural && doc::get_string(o, "metadata.name") == name) {
                return &o;
            }
        }
        return nullptr;
    }
    // The calls that change something, as "VERB PLURAL/NAME".
    [[nodiscard]] std::vector<std::string> writes() const {
        std::vector<std::string> out;
        for (const auto& c : calls) {
            if (c.verb == "create" || c.verb == "merge_patch" || c.verb == "remove") {
                out.push_back(c.verb + " " + c.plural + "/" + c.name);
            }
        }
        return out;
    }

    Result<std::vector<Value>> list(std::string_view plural,
                                    const std::string& label_selector) override {
        calls.push_back({"list", std::string(plural), label_selector, {}});
        if (auto e = injected("list", plural, label_selector)) {
            return *e;
        }
        std::string key = label_selector.substr(0, label_selector.find('='));
        std::string want = label_selector.empty() ? "" : label_selector.substr(key.size() + 1);
        std::vector<Value> out;
        for (const auto& [p, o] : objects) {
            const Value* labels = doc::find_path(o, "metadata.labels");
            bool match =
                label_selector.empty() || (labels != nullptr && labels->value(key, "") == want);
            if (p == plural && match) {
                out.push_back(o);
            }
        }
        return out;
    }
    Result<Value> get(std::string_view plural, const std::string& ns,
                      const std::string& name) override {
        calls.push_back({"get", std::string(plural), name, {}});
        if (auto e = injected("get", plural, name)) {
            return *e;
        }
        Value* o = ns == m_ns ? find(std::string(plural), name) : nullptr;
        if (o == nullptr) {
            return not_found(plural, name);
        }
        return *o;
    }
    Result<Value> create(std::string_view plural, const std::string& ns,
                         const Value& obj) override {
        std::string name = doc::get_string(obj, "metadata.name");
        calls.push_back({"create", std::string(plural), name, obj});
        if (before_write) {
            before_write("create " + std::string(plural) + "/" + name);
        }
        if (auto e = injected("create", plural, name)) {
            return *e;
        }
        REQUIRE(ns == m_ns);
        if (find(std::string(plural), name) != nullptr) {
            return make_error(ErrorKind::Config,
                              std::string(plural) + " \"" + name + "\" already exists", "",
                              "AlreadyExists");
        }
        add(std::string(plural), obj);
        return objects.back().second;
    }
    Result<Value> merge_patch(std::string_view plural, const std::string& name,
                              const Value& patch) override {
        calls.push_back({"merge_patch", std::string(plural), name, patch});
        if (before_write) {
            before_write("merge_patch " + std::string(plural) + "/" + name);
        }
        if (auto e = injected("merge_patch", plural, name)) {
            return *e;
        }
        Value* o = find(std::string(plural), name);
        if (o == nullptr) {
            return not_found(plural, name);
        }
        o->merge_patch(patch);
        const Value* a = doc::find_path(*o, "metadata.annotations");
        bool held = a != nullptr && a->contains(std::string(vocab::k_annotation_hold_apply));
        if (plural == "talosmachines" && !held) { // the controller at work
            bool ready = !never_ready.contains(name);
            (*o)["status"]["conditions"] =
                Value::array({Value{{"type", "Ready"}, {"status", ready ? "True" : "False"}}});
        }
        return *o;
    }
    Result<Value> remove(std::string_view plural, const std::string& name,
                         const std::string& uid) override {
        calls.push_back({"remove", std::string(plural), name, uid});
        if (before_write) {
            before_write("remove " + std::string(plural) + "/" + name);
        }
        if (auto e = injected("remove", plural, name)) {
            return *e;
        }
        for (auto it = objects.begin(); it != objects.end(); ++it) {
            if (it->first == plural && doc::get_string(it->second, "metadata.name") == name) {
                REQUIRE(uid == doc::get_string(it->second, "metadata.uid"));
                Value gone = it->second;
                objects.erase(it);
                return gone;
            }
        }
        return not_found(plural, name);
    }

  private:
    std::string m_ns = "ichor-system";

    std::optional<Error> injected(const std::string& verb, std::string_view plural,
                                  const std::string& name) {
        auto it = fail.find(verb + " " + std::string(plural) + "/" + name);
        return it == fail.end() ? std::nullopt : std::optional<Error>(it->second);
    }
    static Error not_found(std::string_view plural, const std::string& name) {
        return make_error(ErrorKind::Config, std::string(plural) + " \"" + name + "\" not found",
                          "", "NotFound");
    }
};

// A reporter that keeps the steps it is told in `steps`, the warnings in `warnings` (else its
// own list), the status lines in `statuses`.
class Said final : public stages::Reporter {
  public:
    explicit Said(std::vector<std::string>& steps, std::vector<std::string>* warnings = nullptr)
        : m_steps(steps), m_warnings(warnings != nullptr ? *warnings : m_own) {}
    std::vector<std::string> statuses;
    void status(std::string_view l) override { statuses.emplace_back(l); }
    void end_status() override {}
    void step(std::string_view l) override { m_steps.emplace_back(l); }
    void warning(std::string_view l) override { m_warnings.emplace_back(l); }

  private:
    std::vector<std::string>& m_steps;
    std::vector<std::string> m_own;
    std::vector<std::string>& m_warnings;
};

} // namespace ichor::test
