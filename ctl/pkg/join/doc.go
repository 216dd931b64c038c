// Package join is the joining side of bootstrap token discovery, as
// kubeadm's discovery/token: a new node knows the API server's address, a
// bootstrap token and the hash of the cluster CA's public key. It reads the
// kube-public/cluster-info ConfigMap anonymously over TLS it cannot yet
// verify, checks the ConfigMap's JWS signature for its token (made by the
// controller manager's bootstrap signer with the token's secret, so only
// someone who knows the token could have signed it), checks that the CA in
// it has the expected public key hash, reads cluster-info again with that
// CA trusted to see it unchanged, and writes the kubelet's bootstrap
// kubeconfig: the server, that CA and the token.
package join
