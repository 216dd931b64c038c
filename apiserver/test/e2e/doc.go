// Package e2e drives a real skiff-apiserver with the real kubectl v1.32
// (/usr/bin/kubectl), with its default flags, for every verb the API server
// supports, and checks both kubectl's output and the stored objects.
package e2e
