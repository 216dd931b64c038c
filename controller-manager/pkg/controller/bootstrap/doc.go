// Package bootstrap holds upstream's two bootstrap token controllers:
//
//   - the token cleaner deletes a bootstrap token Secret (type
//     bootstrap.kubernetes.io/token in kube-system) once its expiration has
//     passed, so an expired token no longer exists, not only no longer
//     authenticates;
//   - the bootstrap signer signs the cluster-info ConfigMap of kube-public
//     (its "kubeconfig": the API server's address and CA) with every
//     bootstrap token marked usage-bootstrap-signing and not expired, as
//     jws-kubeconfig-<token id> keys (a detached JWS, HS256 keyed with the
//     token, from k8s.io/cluster-bootstrap). A joining node that knows a
//     token reads cluster-info anonymously over a TLS connection it cannot
//     verify yet, and trusts the CA in it only when the signature for its
//     token checks out (and the CA's public key hash matches the one it
//     was given).
package bootstrap
