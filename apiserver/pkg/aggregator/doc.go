// Package aggregator is the API aggregation layer, as upstream's
// kube-aggregator serves it inside kube-apiserver: a request under
// /apis/<group>/<version> whose group-version an APIService with a service
// owns is proxied to a ready endpoint of that Service (upstream's
// --enable-aggregator-routing=true), the backend's certificate checked
// against the APIService's caBundle for <service>.<namespace>.svc, the
// user's identity passed in the X-Remote-User, X-Remote-Group and
// X-Remote-Extra- headers under the front-proxy client certificate. The
// availability controller keeps each APIService's Available condition
// (ServiceNotFound, ServicePortError, MissingEndpoints,
// FailedDiscoveryCheck, Passed; Local for the built-in group-versions) and
// the resource list the last discovery check read, which the server's
// aggregated discovery serves.
//
// The Aggregator holds the APIServices, Services and EndpointSlices as the
// server's own watch caches feed them (Apply*, Reset*); nothing here
// reads etcd.
package aggregator
