// Package app builds the skiffctl command line: the cobra root command and its
// subcommands, one file per verb. Each subcommand keeps its flags in an
// options struct, turns them into calls of the packages that do the work, and
// runs them; cmd/skiffctl only executes the root command and prints the
// error.
//
// The verbs that talk to the API server share a cli.Factory (kubeconfig
// loading, clients, the discovery-backed RESTMapper, -v request logging) and
// cli.Explain, which turns API and connection errors into messages a person
// can act on. certs writes the cluster PKI and kubeconfigs through
// skiff.dev/component-base/certs.
//
// Verbs: certs, config (view, use-context, current-context, get-contexts),
// get, describe, create, apply, delete, label, annotate, scale, edit,
// events, version, api-resources, explain, wait, rollout (status, history,
// undo, restart, pause, resume), logs, completion.
package app
