package rest

import (
	"context"
	"net/http"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"skiff.dev/apiserver/pkg/kubeletclient"
)

// Proxy is a kind's proxy subresource ({pods,services,nodes}/{name}/proxy),
// as upstream's ProxyREST and the kind's ResourceLocation: the options kind
// admission sees, and where a request for an object goes. The endpoint
// serving the proxy asks the kind's row for it.
type Proxy struct {
	// NewOptions builds the kind's proxy options (v1 PodProxyOptions, ...)
	// carrying path, the part of the URL after proxy.
	NewOptions func(path string) runtime.Object
	// Path reads the path back from the options after admission (a
	// mutating webhook may have changed it); false when opts are not the
	// kind's options.
	Path func(opts runtime.Object) (string, bool)
	// Location is upstream's ResourceLocation: where a request for id
	// ("name", "name:port" or "scheme:name:port") in namespace ns goes, and
	// the round tripper that reaches it. Its errors are the client's answer.
	Location func(ctx context.Context, deps LocationDeps, ns, id string) (*url.URL, http.RoundTripper, error)
}

// NewProxy builds a kind's Proxy from its typed options: newOptions makes
// them with a path, path reads it back.
func NewProxy[T runtime.Object](newOptions func(path string) T, path func(T) string,
	location func(ctx context.Context, deps LocationDeps, ns, id string) (*url.URL, http.RoundTripper, error)) *Proxy {
	return &Proxy{
		NewOptions: func(p string) runtime.Object { return newOptions(p) },
		Path: func(opts runtime.Object) (string, bool) {
			o, ok := opts.(T)
			if !ok {
				return "", false
			}
			return path(o), true
		},
		Location: location,
	}
}

// Kubelet is a kind's subresources served by the kubelet of the object's
// node (pods/log, exec, attach and portforward), as upstream's pod
// LogLocation and streamLocation: the kind reads their options and says
// which node's kubelet serves them, at which path and query; the endpoint
// reaches the kubelet.
type Kubelet struct {
	// LogOptions reads and validates a log request's options from its
	// query (upstream's conversion and ValidatePodLogOptions).
	LogOptions func(q url.Values) (*corev1.PodLogOptions, error)
	// Log is where the log of the object named is, with opts (whose
	// container it fills in when none is named).
	Log func(ctx context.Context, deps LocationDeps, ns, name string, opts *corev1.PodLogOptions) (KubeletTarget, error)
	// ConnectOptions reads the options of exec, attach or portforward
	// (sub) from the query: the object admission sees.
	ConnectOptions func(sub string, q url.Values) (runtime.Object, error)
	// Stream is where the exec, attach or portforward (sub) of the object
	// named goes, with the admitted options.
	Stream func(ctx context.Context, deps LocationDeps, ns, name, sub string, opts runtime.Object) (KubeletTarget, error)
}

// KubeletTarget is a request to a node's kubelet.
type KubeletTarget struct {
	Node  *corev1.Node
	Path  string
	Query url.Values
}

// Getter reads one object of a resource.
type Getter interface {
	Get(ctx context.Context, ns, name string) (runtime.Object, error)
}

// LocationDeps are what finding where a connect subresource goes may use.
type LocationDeps struct {
	// Store is the storage of the kind being proxied to.
	Store Getter
	// CoreStore returns the storage of another core/v1 resource
	// ("endpoints", "pods"), nil when it is not served.
	CoreStore func(resource string) Getter
	// Transport reaches pods, services and nodes on ports other than the
	// kubelet's (the API server's proxy transport).
	Transport http.RoundTripper
	// Kubelet is the API server's kubelet client, or the error to answer
	// when it has none.
	Kubelet func() (*kubeletclient.Client, error)
}
