// Package clientconfig turns a daemon's --kubeconfig, --master and client
// rate-limit flags into a client-go configuration.
package clientconfig
