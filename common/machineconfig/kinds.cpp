#include "common/machineconfig/kinds.h"

#include <algorithm>

namespace ichor::machineconfig {

namespace {

// Read off machinery's config/types (registry.Register calls; a kind is named when its document
// type has a Name method).
const std::vector<Kind> k_kinds = {
    {"BGPInstanceConfig", true, 14},
    {"BlackholeRouteConfig", true, 13},
    {"BondConfig", true, 12},
    {"BridgeConfig", true, 12},
    {"CRIBaseRuntimeSpecConfig", false, 14},
    {"CRICustomizationConfig", true, 14},
    {"ContainerConfig", true, 14},
    {"DHCPv4Config", true, 12},
    {"DHCPv6Config", true, 12},
    {"DefaultActionConfig", false, 12},
    {"DiscoveryIdentityConfig", false, 14},
    {"DiscoveryServiceConfig", true, 14},
    {"DummyLinkConfig", true, 12},
    {"EnvironmentConfig", false, 13},
    {"EtcFileConfig", true, 14},
    {"EthernetConfig", true, 12},
    {"EventSinkConfig", false, 12},
    {"ExistingVolumeConfig", true, 12},
    {"ExtensionServiceConfig", true, 12},
    {"ExternalVolumeConfig", true, 13},
    {"FilesystemScrubConfig", false, 14},
    {"FilesystemTrimConfig", false, 14},
    {"HCloudVIPConfig", true, 12},
    {"HTTPProbeConfig", true, 14},
    {"HostnameConfig", false, 12},
    {"ImageCacheConfig", false, 14},
    {"ImageVerificationConfig", false, 13},
    {"KernelModuleConfig", true, 14},
    {"KmsgLogConfig", true, 12},
    {"KubeAPIServerCAConfig", false, 14},
    {"KubeAPIServerConfig", false, 14},
    {"KubeAdmissionControlConfig", true, 14},
    {"KubeAggregatorCAConfig", false, 14},
    {"KubeAuditPolicyConfig", false, 14},
    {"KubeAuthenticationConfig", false, 14},
    {"KubeAuthorizerConfig", true, 14},
    {"KubeClusterConfig", false, 14},
    {"KubeControllerManagerConfig", false, 14},
    {"KubeCoreDNSConfig", false, 14},
    {"KubeCredentialProviderConfig", false, 14},
    {"KubeEtcdEncryptionConfig", false, 14},
    {"KubeExternalManifestConfig", true, 14},
    {"KubeFlannelCNIConfig", false, 14},
    {"KubeInlineManifestConfig", true, 14},
    {"KubeNetworkConfig", false, 14},
    {"KubeNodeConfig", false, 14},
    {"KubePrismConfig", false, 14},
    {"KubeProxyConfig", false, 14},
    {"KubeSchedulerConfig", false, 14},
    {"KubeServiceAccountConfig", false, 14},
    {"KubeSpanConfig", false, 13},
    {"KubeSpanEndpointsConfig", false, 12},
    {"KubeStaticPodConfig", true, 14},
    {"KubeTalosAPIAccessConfig", false, 14},
    {"KubeletConfig", false, 14},
    {"LVMLogicalVolumeConfig", true, 14},
    {"LVMVolumeGroupConfig", true, 14},
    {"Layer2VIPConfig", true, 12},
    {"LinkAliasConfig", true, 12},
    {"LinkConfig", true, 12},
    {"NetworkRuleConfig", true, 12},
    {"OOMConfig", false, 12},
    {"PCIDriverRebindConfig", true, 12},
    {"RAIDArrayConfig", true, 14},
    {"RawVolumeConfig", true, 12},
    {"RegistryAuthConfig", true, 12},
    {"RegistryMirrorConfig", true, 12},
    {"RegistryTLSConfig", true, 12},
    {"ResolverConfig", false, 12},
    {"RoutingRuleConfig", true, 13},
    {"SecurityProfileConfig", false, 14},
    {"SideroLinkConfig", false, 12},
    {"StaticHostConfig", true, 12},
    {"SwapVolumeConfig", true, 12},
    {"SysctlConfig", false, 14},
    {"SysfsConfig", false, 14},
    {"TCPProbeConfig", true, 13},
    {"TimeSyncConfig", false, 12},
    {"TrustedRootsConfig", true, 12},
    {"UdevRulesConfig", false, 14},
    {"UnattendedInstallConfig", false, 14},
    {"UserVolumeConfig", true, 12},
    {"VLANConfig", true, 12},
    {"VRFConfig", true, 13},
    {"VethConfig", true, 14},
    {"VolumeConfig", true, 12},
    {"WatchdogTimerConfig", false, 12},
    {"WireguardConfig", true, 12},
    {"ZswapConfig", false, 12},
};

} // namespace

const std::vector<Kind>& kinds() {
    return k_kinds;
}

std::optional<Kind> find_kind(std::string_view kind) {
    auto it = std::lower_bound(k_kinds.begin(), k_kinds.end(), kind,
                               [](const Kind& k, std::string_view name) { return k.kind < name; });
    if (it == k_kinds.end() || it->kind != kind) {
        return std::nullopt;
    }
    return *it;
}

bool known_at(std::string_view kind, int minor) {
    auto k = find_kind(kind);
    return k.has_value() && minor >= k->since_minor;
}

} // namespace ichor::machineconfig
