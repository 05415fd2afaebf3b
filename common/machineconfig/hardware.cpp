#include "common/machineconfig/hardware.h"

#include "common/util/strings.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <set>

namespace ichor::machineconfig {

using doc::Value;

namespace {

std::string text_of(const Value& v, const std::string& key) {
    auto it = v.find(key);
    return it != v.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const Value* child(const Value& v, const std::string& key) {
    if (!v.is_object()) {
        return nullptr;
    }
    auto it = v.find(key);
    return it != v.end() ? &*it : nullptr;
}

// Talos's glob(): path.Match, so '*' stops at '/'.
bool glob(const std::string& pattern, const std::string& value) {
    return fnmatch(pattern.c_str(), value.c_str(), FNM_PATHNAME) == 0;
}

bool compare_size(std::uint64_t size, const std::string& op, std::uint64_t want) {
    if (op == ">=") {
        return size >= want;
    }
    if (op == "<=") {
        return size <= want;
    }
    if (op == ">") {
        return size > want;
    }
    if (op == "<") {
        return size < want;
    }
    return size == want;
}

// Every disk a selector of Talos's would consider: a transport (not a DM device), writable, no
// CD-ROM (v1alpha1_provider.go, DiskMatchExpression).
bool selectable(const Disk& d) {
    return !d.transport.empty() && !d.readonly && !d.cdrom;
}

// A v1alpha1 machine.install.diskSelector: nullopt when a field cannot be judged.
std::optional<bool> selector_matches(const Value& sel, const Disk& d) {
    if (!selectable(d)) {
        return false;
    }
    for (const auto& [key, v] : sel.items()) {
        const std::string want = v.is_string() ? v.get<std::string>() : v.dump();
        if (key == "size") {
            std::string op;
            std::uint64_t bytes = 0;
            if (!parse_size_condition(want, op, bytes)) {
                return std::nullopt;
            }
            if (!compare_size(d.size, op, bytes)) {
                return false;
            }
            continue;
        }
        static const std::map<std::string, std::string Disk::*> globs{
            {"uuid", &Disk::uuid},     {"wwid", &Disk::wwid},         {"model", &Disk::model},
            {"serial", &Disk::serial}, {"modalias", &Disk::modalias}, {"busPath", &Disk::bus_path}};
        if (auto g = globs.find(key); g != globs.end()) {
            if (!glob(want, d.*(g->second))) {
                return false;
            }
        } else if (key == "type") {
            bool ok = want == "nvme"  ? d.transport == "nvme"
                      : want == "sd"  ? d.transport == "mmc"
                      : want == "hdd" ? d.rotational
                      : want == "ssd" ? !d.rotational
                                      : false;
            if (!ok) {
                return false;
            }
        } else {
            return std::nullopt; // name (Talos refuses it), or a field this code does not know
        }
    }
    return true;
}

std::string trim(std::string s) {
    auto ws = [](unsigned char c) { return std::isspace(c) != 0; };
    s.erase(s.begin(), std::find_if_not(s.begin(), s.end(), ws));
    s.erase(std::find_if_not(s.rbegin(), s.rend(), ws).base(), s.end());
    return s;
}

// A v1.14 CEL match, when it is a conjunction of the simple terms named in the header.
std::optional<bool> cel_matches(const std::string& expr, const Disk& d) {
    static const std::map<std::string, std::string Disk::*> strings{
        {"dev_path", &Disk::dev_path}, {"model", &Disk::model},        {"serial", &Disk::serial},
        {"wwid", &Disk::wwid},         {"modalias", &Disk::modalias},  {"uuid", &Disk::uuid},
        {"bus_path", &Disk::bus_path}, {"transport", &Disk::transport}};
    static const std::map<std::string, bool Disk::*> flags{
        {"rotational", &Disk::rotational}, {"cdrom", &Disk::cdrom}, {"readonly", &Disk::readonly}};
    std::size_t from = 0;
    bool all = true;
    while (from <= expr.size()) {
        auto to = expr.find("&&", from);
        std::string term = trim(expr.substr(from, to == std::string::npos ? to : to - from));
        from = to == std::string::npos ? expr.size() + 1 : to + 2;
        bool negate = term.starts_with('!');
        std::string body = trim(negate ? term.substr(1) : term);
        if (!body.starts_with("disk.")) {
            return std::nullopt;
        }
        body = body.substr(5);
        if (auto f = flags.find(body); f != flags.end()) {
            all = all && (d.*(f->second) != negate);
            continue;
        }
        auto eq = body.find("==");
        if (negate || eq == std::string::npos) {
            return std::nullopt;
        }
        auto s = strings.find(trim(body.substr(0, eq)));
        std::string value = trim(body.substr(eq + 2));
        if (s == strings.end() || value.size() < 2 || value.front() != '"' || value.back() != '"' ||
            value.find('\\') != std::string::npos) {
            return std::nullopt;
        }
        all = all && d.*(s->second) == value.substr(1, value.size() - 2);
    }
    return all;
}

std::string disk_list(const std::vector<Disk>& disks) {
    std::vector<std::string> out;
    for (const auto& d : disks) {
        out.push_back(d.dev_path);
    }
    return util::join(out, ", ");
}

// A selector judged over every disk: a finding when none matches; none when one does or when
// the selector cannot be judged.
template <class Match>
void check_selector(std::vector<HardwareFinding>& out, const std::string& path,
                    const std::string& shown, const std::vector<Disk>& disks, Match match) {
    for (const auto& d : disks) {
        auto m = match(d);
        if (!m || *m) {
            return;
        }
    }
    out.push_back({HardwareFinding::Kind::InstallDisk, path, shown,
                   path + " " + shown +
                       " matches no disk of the node (its disks: " + disk_list(disks) + ")"});
}

void check_install(const std::vector<Value>& documents, const std::vector<Disk>& disks,
                   std::vector<HardwareFinding>& out) {
    for (const auto& d : documents) {
        if (!d.is_object()) {
            continue;
        }
        if (text_of(d, "version") == "v1alpha1") {
            const Value* inst =
                child(d, "machine") ? child(*child(d, "machine"), "install") : nullptr;
            if (inst == nullptr || !inst->is_object()) {
                continue;
            }
            const std::string disk = text_of(*inst, "disk");
            const Value* sel = child(*inst, "diskSelector");
            if (sel != nullptr && sel->is_object() && !sel->empty()) {
                check_selector(out, "machine.install.diskSelector", sel->dump(), disks,
                               [&](const Disk& x) { return selector_matches(*sel, x); });
            } else if (!disk.empty() && !disk.starts_with("/dev/disk/")) {
                bool found = std::any_of(disks.begin(), disks.end(),
                                         [&](const Disk& x) { return x.dev_path == disk; });
                if (!found) {
                    out.push_back(
                        {HardwareFinding::Kind::InstallDisk, "machine.install.disk", disk,
                         "machine.install.disk " + disk +
                             " is not a disk of the node (its disks: " + disk_list(disks) + ")"});
                }
            }
        } else if (text_of(d, "kind") == "UnattendedInstallConfig") {
            const Value* p = child(d, "provisioning");
            const Value* sel = p != nullptr ? child(*p, "diskSelector") : nullptr;
            const std::string match = sel != nullptr ? text_of(*sel, "match") : std::string();
            if (!match.empty()) {
                check_selector(out, "UnattendedInstallConfig provisioning.diskSelector.match",
                               "\"" + match + "\"", disks,
                               [&](const Disk& x) { return cel_matches(match, x); });
            }
        }
    }
}

// The links a configuration names (where, name) and the ones it creates.
struct LinkUse {
    std::vector<std::pair<std::string, std::string>> named;
    std::set<std::string> created;
};

void strings_at(const Value* list, const std::string& where, LinkUse& u) {
    if (list == nullptr || !list->is_array()) {
        return;
    }
    for (const auto& v : *list) {
        if (v.is_string()) {
            u.named.emplace_back(where, v.get<std::string>());
        }
    }
}

void v1alpha1_links(const Value& d, LinkUse& u) {
    const Value* m = child(d, "machine");
    const Value* net = m != nullptr ? child(*m, "network") : nullptr;
    const Value* ifs = net != nullptr ? child(*net, "interfaces") : nullptr;
    if (ifs == nullptr || !ifs->is_array()) {
        return;
    }
    for (std::size_t i = 0; i < ifs->size(); ++i) {
        const Value& x = (*ifs)[i];
        const std::string at = "machine.network.interfaces[" + std::to_string(i) + "]";
        const std::string name = text_of(x, "interface");
        if (name.empty()) {
            continue; // a deviceSelector picks the link by its hardware
        }
        const Value* bond = child(x, "bond");
        const Value* bridge = child(x, "bridge");
        const Value* dummy = child(x, "dummy");
        bool virt = bond != nullptr || bridge != nullptr ||
                    (dummy != nullptr && dummy->is_boolean() && dummy->get<bool>()) ||
                    child(x, "wireguard") != nullptr;
        if (virt) {
            u.created.insert(name);
        } else {
            u.named.emplace_back(at + ".interface", name);
        }
        if (bond != nullptr) {
            strings_at(child(*bond, "interfaces"), at + ".bond.interfaces", u);
        }
        if (bridge != nullptr) {
            strings_at(child(*bridge, "interfaces"), at + ".bridge.interfaces", u);
        }
        if (const Value* vlans = child(x, "vlans"); vlans != nullptr && vlans->is_array()) {
            for (const auto& v : *vlans) {
                if (auto id = v.find("vlanId"); id != v.end()) {
                    u.created.insert(name + "." +
                                     (id->is_string() ? id->get<std::string>() : id->dump()));
                }
            }
        }
    }
}

void document_links(const Value& d, LinkUse& u) {
    const std::string kind = text_of(d, "kind");
    const std::string name = text_of(d, "name");
    const std::string at = kind + " " + name;
    if (kind == "BondConfig" || kind == "BridgeConfig") {
        u.created.insert(name);
        strings_at(child(d, "links"), at + " links", u);
    } else if (kind == "VLANConfig") {
        u.created.insert(name);
        if (std::string p = text_of(d, "parent"); !p.empty()) {
            u.named.emplace_back(at + " parent", p);
        }
    } else if (kind == "LinkAliasConfig" || kind == "DummyLinkConfig" ||
               kind == "WireguardConfig") {
        u.created.insert(name);
    } else if (kind == "LinkConfig" || kind == "DHCPv4Config" || kind == "DHCPv6Config" ||
               kind == "EthernetConfig") {
        if (!name.empty()) {
            u.named.emplace_back(kind, name);
        }
    } else if (kind == "Layer2VIPConfig" || kind == "HCloudVIPConfig") {
        if (std::string l = text_of(d, "link"); !l.empty()) {
            u.named.emplace_back(at + " link", l);
        }
    }
}

void check_links(const std::vector<Value>& documents, const std::vector<std::string>& links,
                 std::vector<HardwareFinding>& out) {
    LinkUse u;
    for (const auto& d : documents) {
        if (!d.is_object()) {
            continue;
        }
        if (text_of(d, "version") == "v1alpha1") {
            v1alpha1_links(d, u);
        } else {
            document_links(d, u);
        }
    }
    const std::set<std::string> have(links.begin(), links.end());
    std::set<std::pair<std::string, std::string>> seen;
    for (const auto& [where, name] : u.named) {
        if (have.count(name) != 0 || u.created.count(name) != 0 ||
            !seen.insert({where, name}).second) {
            continue;
        }
        out.push_back({HardwareFinding::Kind::Link, where, name,
                       where + " names link \"" + name +
                           "\", which is neither a link of the node (its links: " +
                           util::join(links, ", ") + ") nor one the configuration creates"});
    }
}

} // namespace

bool parse_size_condition(const std::string& text, std::string& op, std::uint64_t& bytes) {
    std::string s = trim(text);
    op = "==";
    for (const char* o : {">=", "<=", "==", ">", "<"}) {
        if (s.starts_with(o)) {
            op = o;
            s = trim(s.substr(std::string(o).size()));
            break;
        }
    }
    std::size_t i = 0;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) != 0 || s[i] == '.')) {
        ++i;
    }
    if (i == 0) {
        return false;
    }
    double number = 0;
    try {
        number = std::stod(s.substr(0, i));
    } catch (...) {
        return false;
    }
    std::string unit = util::to_lower(trim(s.substr(i)));
    static const std::map<std::string, double> units{{"", 1},
                                                     {"b", 1},
                                                     {"k", 1e3},
                                                     {"kb", 1e3},
                                                     {"m", 1e6},
                                                     {"mb", 1e6},
                                                     {"g", 1e9},
                                                     {"gb", 1e9},
                                                     {"t", 1e12},
                                                     {"tb", 1e12},
                                                     {"p", 1e15},
                                                     {"pb", 1e15},
                                                     {"ki", 1024.0},
                                                     {"kib", 1024.0},
                                                     {"mi", 1048576.0},
                                                     {"mib", 1048576.0},
                                                     {"gi", 1073741824.0},
                                                     {"gib", 1073741824.0},
                                                     {"ti", 1099511627776.0},
                                                     {"tib", 1099511627776.0}};
    auto u = units.find(unit);
    if (u == units.end()) {
        return false;
    }
    bytes = static_cast<std::uint64_t>(std::llround(number * u->second));
    return true;
}

std::vector<HardwareFinding> check_hardware(const std::vector<Value>& documents,
                                            const std::vector<Disk>& disks,
                                            const std::vector<std::string>& links) {
    std::vector<HardwareFinding> out;
    if (!disks.empty()) {
        check_install(documents, disks, out);
    }
    if (!links.empty()) {
        check_links(documents, links, out);
    }
    return out;
}

} // namespace ichor::machineconfig
