// Package cli holds what every skiffctl verb that talks to the API server
// shares: the connection flags (--kubeconfig, --context, -n, --server, ...),
// a Factory that turns them into a rest.Config, typed and dynamic clients and
// a discovery-backed RESTMapper, the parsing of resource arguments
// ("pods", "deploy/nginx", "pods,services", "all"), and the translation of
// API errors into messages a person can act on.
//
// The Factory builds each client once, on first use, so that commands that
// never reach the server (config view, completion) never load credentials.
package cli
