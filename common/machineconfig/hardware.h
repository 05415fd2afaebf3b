// The disks and links a configuration names, checked against the ones the node has (issue 22;
// talm's safety gates do the same): an install disk or disk selector that matches no disk of the
// node, and a link that is neither one of the node's nor one the same configuration creates.
// Pure: the node's inventory comes in as values (the Inspection's status.disks and linkNames).
#pragma once

#include "common/doc/value.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ichor::machineconfig {

// One disk of the node (Disks.block.talos.dev), with the fields Talos's selectors match.
struct Disk {
    std::string dev_path; // /dev/sda
    std::uint64_t size = 0;
    std::string model, serial, wwid, modalias, uuid, bus_path, transport;
    bool rotational = false;
    bool cdrom = false;
    bool readonly = false;
};

struct HardwareFinding {
    enum class Kind { InstallDisk, Link } kind;
    std::string path;    // where the configuration names it: machine.install.disk, LinkConfig eth9
    std::string name;    // the disk, the selector as text, or the link
    std::string message; // the sentence, without the node's address
};

// The findings of `documents` (a configuration's documents, secrets digested or not) against the
// node's `disks` and `links` (link names). No disks: the install disk is not judged (the node's
// disks were not read); no links: the links are not judged. An install disk under /dev/disk/ (a
// symlink) and a CEL match other than a conjunction of `disk.FIELD == "VALUE"`, `disk.FLAG`,
// `!disk.FLAG` are not judged either: nothing is claimed that this code cannot decide.
std::vector<HardwareFinding> check_hardware(const std::vector<doc::Value>& documents,
                                            const std::vector<Disk>& disks,
                                            const std::vector<std::string>& links);

// Talos's disk size condition ("<= 1TB", ">=100GiB", "4GB", "1000000"), humanize's units: the
// operator and the size in bytes; false when it does not parse.
bool parse_size_condition(const std::string& text, std::string& op, std::uint64_t& bytes);

} // namespace ichor::machineconfig
