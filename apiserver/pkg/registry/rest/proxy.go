package rest

import (
	"context"
	"net/http"
	"net/url"

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
	Location func(ctx context.Context, deps ProxyDeps, ns, id string) (*url.URL, http.RoundTripper, error)
}

// Getter reads one object of a resource.
type Getter interface {
	Get(ctx context.Context, ns, name string) (runtime.Object, error)
}

// ProxyDeps are what finding a proxy location may use.
type ProxyDeps struct {
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
