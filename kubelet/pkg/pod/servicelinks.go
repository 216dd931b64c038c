package pod

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ServiceLister is the kubelet's cache of the cluster's Services, for the
// service environment variables.
type ServiceLister interface {
	// Services lists the Services of a namespace.
	Services(namespace string) ([]*corev1.Service, error)
	// Synced says the cache was filled at least once.
	Synced() bool
}

// masterService is the API server's Service in the default namespace,
// whose variables every pod gets.
const masterService = "kubernetes"

// ServiceEnv is upstream's service environment of a pod: the variables of
// every Service of its namespace that has a cluster IP (not headless, not
// ExternalName) when enableServiceLinks is true (its default), and always
// those of the kubernetes Service in the default namespace.
func ServiceEnv(pod *corev1.Pod, lister ServiceLister) (map[string]string, error) {
	env := map[string]string{}
	if lister == nil {
		return env, nil
	}
	if !lister.Synced() {
		return nil, fmt.Errorf("services have not yet been read at least once, cannot construct envvars")
	}
	links := pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks
	byName := map[string]*corev1.Service{}
	if links {
		list, err := lister.Services(pod.Namespace)
		if err != nil {
			return nil, fmt.Errorf("failed to list services when setting up env vars: %w", err)
		}
		for _, svc := range list {
			if serviceIPSet(svc) && !(pod.Namespace == metav1.NamespaceDefault && svc.Name == masterService) {
				byName[svc.Name] = svc
			}
		}
	}
	list, err := lister.Services(metav1.NamespaceDefault)
	if err != nil {
		return nil, fmt.Errorf("failed to list services when setting up env vars: %w", err)
	}
	for _, svc := range list {
		if svc.Name == masterService && serviceIPSet(svc) {
			byName[svc.Name] = svc
		}
	}
	for _, svc := range byName {
		for _, kv := range ServiceVars(svc) {
			env[kv[0]] = kv[1]
		}
	}
	return env, nil
}

func serviceIPSet(svc *corev1.Service) bool {
	return svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone && len(svc.Spec.Ports) > 0
}

// ServiceVars are one Service's variables, as name and value pairs, as
// upstream's envvars.FromServices writes them: <NAME>_SERVICE_HOST,
// <NAME>_SERVICE_PORT (the first port), <NAME>_SERVICE_PORT_<PORT NAME>
// for named ports, and Docker's link variables: <NAME>_PORT (the first
// port's URL), and per port <NAME>_PORT_<port>_<PROTO> with _PROTO,
// _PORT and _ADDR.
func ServiceVars(svc *corev1.Service) [][2]string {
	if !serviceIPSet(svc) {
		return nil
	}
	prefix := envName(svc.Name)
	ip := svc.Spec.ClusterIP
	out := [][2]string{
		{prefix + "_SERVICE_HOST", ip},
		{prefix + "_SERVICE_PORT", strconv.Itoa(int(svc.Spec.Ports[0].Port))},
	}
	for _, sp := range svc.Spec.Ports {
		if sp.Name != "" {
			out = append(out, [2]string{prefix + "_SERVICE_PORT_" + envName(sp.Name), strconv.Itoa(int(sp.Port))})
		}
	}
	for i, sp := range svc.Spec.Ports {
		proto := string(sp.Protocol)
		if proto == "" {
			proto = string(corev1.ProtocolTCP)
		}
		url := strings.ToLower(proto) + "://" + net.JoinHostPort(ip, strconv.Itoa(int(sp.Port)))
		if i == 0 {
			out = append(out, [2]string{prefix + "_PORT", url})
		}
		pp := fmt.Sprintf("%s_PORT_%d_%s", prefix, sp.Port, strings.ToUpper(proto))
		out = append(out,
			[2]string{pp, url},
			[2]string{pp + "_PROTO", strings.ToLower(proto)},
			[2]string{pp + "_PORT", strconv.Itoa(int(sp.Port))},
			[2]string{pp + "_ADDR", ip},
		)
	}
	return out
}

// envName is a Service or port name as a variable name: upper case, with
// underscores for dashes.
func envName(s string) string {
	return strings.ToUpper(strings.ReplaceAll(s, "-", "_"))
}

// sortedKeys are a map's keys in order.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
