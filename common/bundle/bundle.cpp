#include "common/bundle/bundle.h"

#include "common/doc/vocabulary.h"
#include "common/machineconfig/layout.h"
#include "common/util/strings.h"

namespace ichor::bundle {

using doc::Value;

std::string Bundle::os_ca_pem() const {
    return machineconfig::pem_from_field(os.crt);
}

std::vector<std::string> Bundle::secret_values() const {
    std::vector<std::string> out;
    for (const auto* s : {&cluster_secret, &bootstrap_token, &secretbox_encryption_secret,
                          &aescbc_encryption_secret, &trustd_token, &etcd.key, &k8s.key,
                          &k8s_aggregator.key, &k8s_service_account.key, &os.key}) {
        if (!s->empty()) {
            out.push_back(*s);
        }
    }
    return out;
}

namespace {

CertAndKey cert_and_key(const Value& v, std::string_view path) {
    CertAndKey ck;
    if (const Value* p = doc::find_path(v, path); p != nullptr && p->is_object()) {
        ck.crt = p->value("crt", "");
        ck.key = p->value("key", "");
    }
    return ck;
}

Status require(const std::string& value, std::string_view source, std::string_view field) {
    if (value.empty()) {
        return make_error(ErrorKind::Config,
                          std::string(source) + ": the secrets bundle has no " + std::string(field),
                          "give the bundle written by talosctl gen secrets or kubectl ichor adopt",
                          vocab::code::k_bad_bundle);
    }
    return ok_status();
}

} // namespace

Result<Bundle> parse(std::string_view text, std::string_view source) {
    auto v = doc::parse_one(text, source);
    if (!v) {
        Error e = v.error();
        e.kind = ErrorKind::Config;
        return e;
    }
    if (!v->is_object()) {
        return make_error(ErrorKind::Config, std::string(source) + ": not a secrets bundle", "",
                          vocab::code::k_bad_bundle);
    }
    Bundle b;
    b.cluster_id = doc::get_string(*v, "cluster.id");
    b.cluster_secret = doc::get_string(*v, "cluster.secret");
    b.bootstrap_token = doc::get_string(*v, "secrets.bootstraptoken");
    b.secretbox_encryption_secret = doc::get_string(*v, "secrets.secretboxencryptionsecret");
    b.aescbc_encryption_secret = doc::get_string(*v, "secrets.aescbcencryptionsecret");
    b.trustd_token = doc::get_string(*v, "trustdinfo.token");
    b.etcd = cert_and_key(*v, "certs.etcd");
    b.k8s = cert_and_key(*v, "certs.k8s");
    b.k8s_aggregator = cert_and_key(*v, "certs.k8saggregator");
    b.k8s_service_account = cert_and_key(*v, "certs.k8sserviceaccount");
    b.os = cert_and_key(*v, "certs.os");
    if (auto st = require(b.cluster_id, source, "cluster.id"); !st) {
        return st.error();
    }
    if (auto st = require(b.os.crt, source, "certs.os.crt"); !st) {
        return st.error();
    }
    if (b.os_ca_pem().find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
        return make_error(ErrorKind::Config,
                          std::string(source) + ": certs.os.crt is not base64 of a PEM certificate",
                          "", vocab::code::k_bad_bundle);
    }
    return b;
}

namespace {
Value ck_value(const CertAndKey& ck, bool with_crt) {
    Value v = Value::object();
    if (with_crt) {
        v["crt"] = ck.crt;
    }
    v["key"] = ck.key;
    return v;
}
} // namespace

std::string to_yaml(const Bundle& b) {
    Value v = Value::object();
    v["cluster"]["id"] = b.cluster_id;
    v["cluster"]["secret"] = b.cluster_secret;
    v["secrets"]["bootstraptoken"] = b.bootstrap_token;
    if (!b.aescbc_encryption_secret.empty()) {
        v["secrets"]["aescbcencryptionsecret"] = b.aescbc_encryption_secret;
    }
    if (!b.secretbox_encryption_secret.empty()) {
        v["secrets"]["secretboxencryptionsecret"] = b.secretbox_encryption_secret;
    }
    v["trustdinfo"]["token"] = b.trustd_token;
    v["certs"]["etcd"] = ck_value(b.etcd, true);
    v["certs"]["k8s"] = ck_value(b.k8s, true);
    v["certs"]["k8saggregator"] = ck_value(b.k8s_aggregator, true);
    v["certs"]["k8sserviceaccount"] = ck_value(b.k8s_service_account, false);
    v["certs"]["os"] = ck_value(b.os, true);
    return doc::to_yaml(v);
}

namespace {

std::string str(const Value* v, std::string_view path) {
    return v == nullptr ? std::string() : doc::get_string(*v, path);
}

// A v1alpha1 field as the v1.14 documents hold it (the layout table), in the bundle's form:
// the documents carry raw PEM, the bundle base64 of PEM.
std::string v114(const machineconfig::Config& c, std::string_view path) {
    namespace layout = machineconfig::layout;
    Value v = layout::read(c.documents, path);
    if (!v.is_string() || v.get<std::string>().empty()) {
        return {};
    }
    auto codec = layout::home(path)->field->codec;
    if (layout::wraps_secret(codec) && v == *layout::stored(c.documents, path)) {
        return {}; // no EncryptionConfiguration around it
    }
    bool pem = codec == layout::Codec::Pem || codec == layout::Codec::PemKey;
    return pem ? util::base64_encode(v.get<std::string>()) : v.get<std::string>();
}

// A CA pair from its document, when the configuration has the document.
void recover_pair(const machineconfig::Config& c, std::string_view path, CertAndKey& ck) {
    auto row = machineconfig::layout::home(std::string(path) + ".crt");
    if (ck.key.empty() && row && c.typed(row->document->kind) != nullptr) {
        ck = {v114(c, std::string(path) + ".crt"), v114(c, std::string(path) + ".key")};
    }
}

void recover_v114(const machineconfig::Config& c, Bundle& b) {
    b.cluster_id = b.cluster_id.empty() ? v114(c, "cluster.id") : b.cluster_id;
    b.cluster_secret = b.cluster_secret.empty() ? v114(c, "cluster.secret") : b.cluster_secret;
    recover_pair(c, "cluster.ca", b.k8s);
    recover_pair(c, "cluster.aggregatorCA", b.k8s_aggregator);
    if (b.k8s_service_account.key.empty()) {
        b.k8s_service_account.key = v114(c, "cluster.serviceAccount.key");
    }
    if (b.secretbox_encryption_secret.empty()) {
        b.secretbox_encryption_secret = v114(c, "cluster.secretboxEncryptionSecret");
    }
}

} // namespace

Result<Bundle> recover_from_config(const machineconfig::Config& c, std::string_view source) {
    const Value* v = c.v1alpha1();
    if (v == nullptr) {
        return make_error(ErrorKind::Config,
                          std::string(source) + ": the configuration has no v1alpha1 document", "",
                          vocab::code::k_bad_config);
    }
    Bundle b;
    b.cluster_id = str(v, "cluster.id");
    b.cluster_secret = str(v, "cluster.secret");
    b.bootstrap_token = str(v, "cluster.token");
    b.secretbox_encryption_secret = str(v, "cluster.secretboxEncryptionSecret");
    b.aescbc_encryption_secret = str(v, "cluster.aescbcEncryptionSecret");
    b.trustd_token = str(v, "machine.token");
    b.etcd = {str(v, "cluster.etcd.ca.crt"), str(v, "cluster.etcd.ca.key")};
    b.k8s = {str(v, "cluster.ca.crt"), str(v, "cluster.ca.key")};
    b.k8s_aggregator = {str(v, "cluster.aggregatorCA.crt"), str(v, "cluster.aggregatorCA.key")};
    b.k8s_service_account.key = str(v, "cluster.serviceAccount.key");
    b.os = {str(v, "machine.ca.crt"), str(v, "machine.ca.key")};
    recover_v114(c, b);
    std::string role = str(v, "machine.type");
    if (b.os.key.empty() || b.k8s.key.empty() || b.etcd.key.empty() || role == "worker") {
        return make_error(ErrorKind::Config,
                          std::string(source) + " is a " + (role.empty() ? "node" : role) +
                              " whose configuration has no CA keys; recovering the secrets needs a "
                              "control plane",
                          "kubectl ichor trustcheck --recover-secrets --recover-from "
                          "CONTROL-PLANE-ADDRESS ...",
                          vocab::code::k_not_control_plane);
    }
    if (b.cluster_id.empty()) {
        return make_error(ErrorKind::Config,
                          std::string(source) + ": the configuration has no cluster ID", "",
                          vocab::code::k_bad_config);
    }
    return b;
}

Status refuse_rotation(const Value& secret) {
    const Value* data = doc::find_path(secret, "data");
    if (data != nullptr && data->is_object() && data->contains("rotation.yaml")) {
        return make_error(ErrorKind::Findings,
                          "Secret " + doc::get_string(secret, "metadata.namespace") + "/" +
                              doc::get_string(secret, "metadata.name") +
                              " holds rotation.yaml: a CA rotation is under way, and the nodes "
                              "trust other CAs until it ends; " +
                              std::string(vocab::k_nothing_written),
                          "finish the rotation first, then run this again",
                          vocab::code::k_rotation_in_progress);
    }
    return ok_status();
}

Result<Bundle> from_secret(const Value& secret, const std::string& key) {
    std::string ns = doc::get_string(secret, "metadata.namespace");
    std::string name = doc::get_string(secret, "metadata.name");
    std::string where = "Secret " + ns + "/" + name;
    if (auto st = refuse_rotation(secret); !st) {
        return st.error();
    }
    const Value* data = doc::find_path(secret, "data");
    if (data == nullptr || !data->is_object() || !data->contains(key) ||
        !(*data)[key].is_string()) {
        return make_error(ErrorKind::Config, where + " has no key \"" + key + "\"",
                          "kubectl get secret -n " + ns + " " + name + " -o jsonpath='{.data}'",
                          vocab::code::k_bad_bundle);
    }
    auto decoded = util::base64_decode((*data)[key].get<std::string>());
    if (!decoded) {
        return make_error(ErrorKind::Config, where + ": " + key + " is not base64", "",
                          vocab::code::k_bad_bundle);
    }
    return parse(*decoded, where);
}

} // namespace ichor::bundle
