// Package app builds the skiffctl command line: the cobra root command and its
// subcommands. Each subcommand keeps its flags in an options struct with
// AddFlags and Validate, turns them into the options of the package that does
// the work, and runs it; cmd/skiffctl only executes the root command.
//
// The only subcommand so far is certs, which writes the cluster PKI and the
// kubeconfigs through package skiff.dev/ctl/pkg/certs.
package app
