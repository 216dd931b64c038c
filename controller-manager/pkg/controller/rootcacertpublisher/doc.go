// Package rootcacertpublisher holds the root CA publisher: every namespace
// gets the `kube-root-ca.crt` ConfigMap whose `ca.crt` key is the cluster CA
// bundle, so pods can verify the API server. The ConfigMap is recreated
// when deleted and put back when edited.
package rootcacertpublisher
