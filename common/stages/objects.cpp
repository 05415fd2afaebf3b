#include "common/stages/objects.h"

#include "common/kube/paths.h"

namespace ichor::stages {

namespace {

// The Ichor objects, and the bundle Secret of a whole-cluster adoption.
std::string path_of(std::string_view plural, std::string_view ns, std::string_view name = {}) {
    return plural == "secrets" ? kube::secret_path(ns, name) : kube::ichor_path(plural, ns, name);
}

class KubeObjects final : public IchorObjects {
  public:
    explicit KubeObjects(kube::Client& k) : m_k(k) {}
    explicit KubeObjects(std::unique_ptr<kube::Client> owned)
        : m_k(*owned), m_owned(std::move(owned)) {}

    [[nodiscard]] const std::string& ns() const override { return m_k.ns(); }

    Result<std::vector<doc::Value>> list(std::string_view plural,
                                         const std::string& label_selector) override {
        auto l = m_k.list(path_of(plural, m_k.ns()), {.label_selector = label_selector});
        if (!l) {
            return l.error().wrap("listing " + std::string(plural) + " in namespace " + m_k.ns());
        }
        const doc::Value& items = (*l)["items"];
        return std::vector<doc::Value>(items.begin(), items.end());
    }
    Result<doc::Value> get(std::string_view plural, const std::string& ns,
                           const std::string& name) override {
        return m_k.get(path_of(plural, ns, name));
    }
    Result<doc::Value> create(std::string_view plural, const std::string& ns,
                              const doc::Value& obj) override {
        return m_k.create(path_of(plural, ns), obj);
    }
    Result<doc::Value> merge_patch(std::string_view plural, const std::string& name,
                                   const doc::Value& patch) override {
        return m_k.merge_patch(path_of(plural, m_k.ns(), name), patch);
    }
    Result<doc::Value> remove(std::string_view plural, const std::string& name,
                              const std::string& uid) override {
        return m_k.remove(path_of(plural, m_k.ns(), name), {.uid = uid});
    }

  private:
    kube::Client& m_k;
    std::unique_ptr<kube::Client> m_owned; // a clone's, for another thread
};

} // namespace

std::unique_ptr<IchorObjects> objects_over(kube::Client& kube) {
    return std::make_unique<KubeObjects>(kube);
}

ObjectsFactory writers_over(kube::Client& kube) {
    return [&kube]() -> std::unique_ptr<IchorObjects> {
        return std::make_unique<KubeObjects>(kube.clone());
    };
}

} // namespace ichor::stages
