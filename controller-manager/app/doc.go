// Package app is skiff-controller-manager: its flags (Options), the
// building of clients, informers and controllers (Setup), and Run, which
// serves health and metrics and, while this replica holds the
// kube-controller-manager Lease, runs every enabled controller.
//
// Controllers are built only once leadership is won, so a standby replica
// watches nothing and acts on nothing.
package app
