package ciliumlab

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// ChartVersion is the chart the objects stand for (deploy/cilium/ichor-cilium.yaml).
const ChartVersion = "1.19.6"

// Defaults are chart 1.19.6's values.yaml for the paths the objects depend on.
func Defaults() map[string]any {
	return map[string]any{
		"ipam":                 map[string]any{"mode": "cluster-pool"},
		"kubeProxyReplacement": "false",
		"k8sServiceHost":       "",
		"k8sServicePort":       "",
		"routingMode":          "",
		"tunnelProtocol":       "",
		"tunnelPort":           0,
		"autoDirectNodeRoutes": false,
		"hubble": map[string]any{
			"enabled": true,
			"relay":   map[string]any{"enabled": false},
			"ui":      map[string]any{"enabled": false},
		},
		"l2announcements":       map[string]any{"enabled": false},
		"bgpControlPlane":       map[string]any{"enabled": false},
		"bandwidthManager":      map[string]any{"enabled": false},
		"gatewayAPI":            map[string]any{"enabled": false},
		"cluster":               map[string]any{"name": "default", "id": 0},
		"cni":                   map[string]any{"exclusive": true},
		"policyEnforcementMode": "default",
		"cgroup": map[string]any{
			"autoMount": map[string]any{"enabled": true},
			"hostRoot":  "/run/cilium/cgroupv2",
		},
		"operator":  map[string]any{"replicas": 2},
		"resources": map[string]any{},
		"securityContext": map[string]any{"capabilities": map[string]any{
			"ciliumAgent": []any{"CHOWN", "KILL", "NET_ADMIN", "NET_RAW", "IPC_LOCK", "SYS_MODULE",
				"SYS_ADMIN", "SYS_RESOURCE", "DAC_OVERRIDE", "FOWNER", "SETGID", "SETUID", "SYSLOG"},
			"cleanCiliumState": []any{"NET_ADMIN", "SYS_MODULE", "SYS_ADMIN", "SYS_RESOURCE"},
		}},
	}
}

// GuideValues are the Talos guide's values ("Deploying Cilium CNI", kube-proxy-free), which are
// the values Ichor owns.
func GuideValues() map[string]any {
	return map[string]any{
		"ipam":                 map[string]any{"mode": "kubernetes"},
		"kubeProxyReplacement": true,
		"k8sServiceHost":       "localhost",
		"k8sServicePort":       7445,
		"securityContext": map[string]any{"capabilities": map[string]any{
			"ciliumAgent": []any{"CHOWN", "KILL", "NET_ADMIN", "NET_RAW", "IPC_LOCK", "SYS_ADMIN",
				"SYS_RESOURCE", "DAC_OVERRIDE", "FOWNER", "SETGID", "SETUID", "SYSLOG"},
			"cleanCiliumState": []any{"NET_ADMIN", "SYS_ADMIN", "SYS_RESOURCE"},
		}},
		"cgroup": map[string]any{"autoMount": map[string]any{"enabled": false}, "hostRoot": "/sys/fs/cgroup"},
	}
}

// Merge is Helm's coalescing: overlay over base, maps key by key, a nil removes the key.
func Merge(base, overlay map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range overlay {
		if v == nil {
			delete(out, k)
			continue
		}
		bm, bok := out[k].(map[string]any)
		om, ook := v.(map[string]any)
		if bok && ook {
			out[k] = Merge(bm, om)
		} else {
			out[k] = v
		}
	}
	return out
}

func get(values map[string]any, path ...string) any {
	var cur any = values
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

func str(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	default:
		return fmt.Sprint(x)
	}
}

func truthy(v any) bool { return v == true || v == "true" }

func strings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		out = append(out, str(x))
	}
	return out
}

// Objects are the Cilium objects of one install.
type Objects struct {
	Config      *corev1.ConfigMap
	Agent       *appsv1.DaemonSet
	Deployments []*appsv1.Deployment // cilium-operator, and hubble-relay / hubble-ui when enabled
}

// HelmMeta, when set, marks the objects as helm install does (label managed-by and the
// meta.helm.sh annotations); helm template output has none.
type HelmMeta struct{ Release, Namespace string }

// Render builds the objects from the values an install used (merged over Defaults), writing each
// field the way chart 1.19.6's templates do: templates/cilium-configmap.yaml,
// cilium-agent/daemonset.yaml, cilium-operator/deployment.yaml, hubble-relay/deployment.yaml,
// hubble-ui/deployment.yaml.
func Render(user map[string]any, namespace string, helm *HelmMeta) Objects {
	v := Merge(Defaults(), user)
	meta := func(name string, labels map[string]string) metav1.ObjectMeta {
		m := metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels}
		if helm != nil {
			m.Labels["app.kubernetes.io/managed-by"] = "Helm"
			m.Annotations = map[string]string{
				"meta.helm.sh/release-name":      helm.Release,
				"meta.helm.sh/release-namespace": helm.Namespace,
			}
		}
		return m
	}
	data := map[string]string{
		"ipam":                    str(get(v, "ipam", "mode")),
		"kube-proxy-replacement":  str(get(v, "kubeProxyReplacement")),
		"routing-mode":            or(str(get(v, "routingMode")), "tunnel"),
		"tunnel-protocol":         or(str(get(v, "tunnelProtocol")), "vxlan"),
		"auto-direct-node-routes": str(get(v, "autoDirectNodeRoutes")),
		"enable-hubble":           str(get(v, "hubble", "enabled")),
		"cluster-name":            str(get(v, "cluster", "name")),
		"cluster-id":              str(get(v, "cluster", "id")),
		"cni-exclusive":           str(get(v, "cni", "exclusive")),
		"enable-policy":           str(get(v, "policyEnforcementMode")),
		"cgroup-root":             str(get(v, "cgroup", "hostRoot")),
		"enable-ipv4-masquerade":  or(str(get(v, "enableIPv4Masquerade")), "true"),
		"debug":                   "false",
	}
	if data["ipam"] == "cluster-pool" {
		data["cluster-pool-ipv4-cidr"] = "10.0.0.0/8"
		data["cluster-pool-ipv4-mask-size"] = "24"
	}
	if data["kube-proxy-replacement"] == "true" {
		data["kube-proxy-replacement-healthz-bind-address"] = ""
	}
	if p := str(get(v, "tunnelPort")); p != "" && p != "0" {
		data["tunnel-port"] = p
	}
	if c := str(get(v, "ipv4NativeRoutingCIDR")); c != "" {
		data["ipv4-native-routing-cidr"] = c
	}
	for key, path := range map[string][]string{
		"enable-l2-announcements":  {"l2announcements", "enabled"},
		"enable-bgp-control-plane": {"bgpControlPlane", "enabled"},
		"enable-bandwidth-manager": {"bandwidthManager", "enabled"},
		"enable-gateway-api":       {"gatewayAPI", "enabled"},
	} {
		if truthy(get(v, path...)) {
			data[key] = "true"
		}
	}
	if m := get(v, "bpf", "masquerade"); m != nil {
		data["enable-bpf-masquerade"] = str(m)
	}
	if truthy(get(v, "hubble", "enabled")) {
		data["hubble-socket-path"] = "/var/run/cilium/hubble.sock"
	}

	env := []corev1.EnvVar{{Name: "K8S_NODE_NAME", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}}
	if host := str(get(v, "k8sServiceHost")); host != "" {
		env = append(env, corev1.EnvVar{Name: "KUBERNETES_SERVICE_HOST", Value: host},
			corev1.EnvVar{Name: "KUBERNETES_SERVICE_PORT", Value: str(get(v, "k8sServicePort"))})
	}
	caps := func(list []string) *corev1.SecurityContext {
		add := make([]corev1.Capability, 0, len(list))
		for _, c := range list {
			add = append(add, corev1.Capability(c))
		}
		return &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: add, Drop: []corev1.Capability{"ALL"}}}
	}
	image := "quay.io/cilium/cilium:v" + ChartVersion
	agent := corev1.Container{Name: "cilium-agent", Image: image, Env: env,
		SecurityContext: caps(strings(get(v, "securityContext", "capabilities", "ciliumAgent")))}
	if res := resources(get(v, "resources")); res != nil {
		agent.Resources = *res
	}
	var inits []corev1.Container
	inits = append(inits, corev1.Container{Name: "config", Image: image})
	if truthy(get(v, "cgroup", "autoMount", "enabled")) {
		inits = append(inits, corev1.Container{Name: "mount-cgroup", Image: image,
			Env: []corev1.EnvVar{{Name: "CGROUP_ROOT", Value: str(get(v, "cgroup", "hostRoot"))}}})
	}
	inits = append(inits,
		corev1.Container{Name: "apply-sysctl-overwrites", Image: image},
		corev1.Container{Name: "mount-bpf-fs", Image: image},
		corev1.Container{Name: "clean-cilium-state", Image: image,
			SecurityContext: caps(strings(get(v, "securityContext", "capabilities", "cleanCiliumState")))},
		corev1.Container{Name: "install-cni-binaries", Image: image})
	agentLabels := map[string]string{"k8s-app": "cilium", "app.kubernetes.io/part-of": "cilium",
		"app.kubernetes.io/name": "cilium-agent"}
	out := Objects{
		Config: &corev1.ConfigMap{ObjectMeta: meta("cilium-config", map[string]string{}), Data: data},
		Agent: &appsv1.DaemonSet{
			ObjectMeta: meta("cilium", copyMap(agentLabels)),
			Spec: appsv1.DaemonSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "cilium"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: copyMap(agentLabels)},
					Spec: corev1.PodSpec{HostNetwork: true, Containers: []corev1.Container{agent},
						InitContainers: inits},
				},
			},
		},
	}
	deployment := func(name, app string, replicas int32, image string) *appsv1.Deployment {
		labels := map[string]string{"k8s-app": app}
		if name == "cilium-operator" {
			labels = map[string]string{"io.cilium/app": "operator", "name": "cilium-operator"}
		}
		return &appsv1.Deployment{
			ObjectMeta: meta(name, copyMap(labels)),
			Spec: appsv1.DeploymentSpec{
				Replicas: &replicas,
				Selector: &metav1.LabelSelector{MatchLabels: copyMap(labels)},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: copyMap(labels)},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: image}}},
				},
			},
		}
	}
	replicas, _ := strconv.Atoi(str(get(v, "operator", "replicas")))
	out.Deployments = append(out.Deployments,
		deployment("cilium-operator", "cilium-operator", int32(replicas), "quay.io/cilium/operator-generic:v"+ChartVersion))
	hubble := truthy(get(v, "hubble", "enabled"))
	if hubble && truthy(get(v, "hubble", "relay", "enabled")) {
		out.Deployments = append(out.Deployments, deployment("hubble-relay", "hubble-relay", 1, "quay.io/cilium/hubble-relay:v"+ChartVersion))
	}
	if hubble && truthy(get(v, "hubble", "ui", "enabled")) {
		out.Deployments = append(out.Deployments, deployment("hubble-ui", "hubble-ui", 1, "quay.io/cilium/hubble-ui:v0.13.3"))
	}
	return out
}

func or(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// resources reads a values `resources` map ({requests: {cpu: 100m}, limits: {...}}).
func resources(v any) *corev1.ResourceRequirements {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return nil
	}
	list := func(x any) corev1.ResourceList {
		lm, ok := x.(map[string]any)
		if !ok {
			return nil
		}
		out := corev1.ResourceList{}
		keys := make([]string, 0, len(lm))
		for k := range lm {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if q, err := resource.ParseQuantity(str(lm[k])); err == nil {
				out[corev1.ResourceName(k)] = q
			}
		}
		return out
	}
	return &corev1.ResourceRequirements{Requests: list(m["requests"]), Limits: list(m["limits"])}
}

// Apply creates the objects (an object that exists is replaced by an update), with `manager` as
// the field manager: "talos" stands for a Talos inline manifest, "helm" for helm install,
// "cilium" for the cilium CLI.
func Apply(ctx context.Context, cs kubernetes.Interface, objs Objects, manager string) error {
	ns := objs.Config.Namespace
	create := metav1.CreateOptions{FieldManager: manager}
	update := metav1.UpdateOptions{FieldManager: manager}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, objs.Config, create); apierrors.IsAlreadyExists(err) {
		_, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, objs.Config, update)
		if err != nil {
			return fmt.Errorf("ConfigMap cilium-config: %w", err)
		}
	} else if err != nil {
		return fmt.Errorf("ConfigMap cilium-config: %w", err)
	}
	if _, err := cs.AppsV1().DaemonSets(ns).Create(ctx, objs.Agent, create); apierrors.IsAlreadyExists(err) {
		_, err = cs.AppsV1().DaemonSets(ns).Update(ctx, objs.Agent, update)
		if err != nil {
			return fmt.Errorf("DaemonSet cilium: %w", err)
		}
	} else if err != nil {
		return fmt.Errorf("DaemonSet cilium: %w", err)
	}
	for _, d := range objs.Deployments {
		if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, create); apierrors.IsAlreadyExists(err) {
			_, err = cs.AppsV1().Deployments(ns).Update(ctx, d, update)
			if err != nil {
				return fmt.Errorf("Deployment %s: %w", d.Name, err)
			}
		} else if err != nil {
			return fmt.Errorf("Deployment %s: %w", d.Name, err)
		}
	}
	return nil
}
