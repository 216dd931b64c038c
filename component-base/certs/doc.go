// Package certs writes a skiff cluster's public key infrastructure: one cluster
// CA, the API server's serving certificate, a client certificate for every
// identity that talks to the API server (admin, controller manager, scheduler,
// proxy, each kubelet), the API server's client certificate for reaching
// kubelets, each kubelet's serving certificate, the service-account signing key
// pair, and a kubeconfig per client identity with everything embedded.
//
// Generate is the entry point and is idempotent. It keeps what is already on
// disk when it is still right: the CA is never replaced (unless Options.Force is
// set), and a leaf certificate is kept while it parses, matches its key, chains
// to the CA, is not about to expire, carries the expected subject and key usage
// and, for serving certificates, covers every requested SAN. Anything missing or
// no longer right is (re)issued, so running it on every cluster start costs
// nothing and rotates nothing.
//
// A walkthrough of one run:
//
//  1. The CA is loaded from ca.crt/ca.key, or created when both are missing.
//  2. sa.key is loaded or created; sa.pub is rewritten if it does not match.
//  3. Each certificate in the plan (see Generate) is checked against what is
//     wanted and issued again if needed.
//  4. Each kubeconfig is rendered from the current CA and client pair and
//     written only if its bytes differ from the file on disk.
//
// The lower-level helpers (NewCA, LoadCA, IssueClientCert, IssueServingCert,
// WriteKeyPair, Kubeconfig) serve tests and tools that need an extra identity,
// a foreign CA or an expired certificate; WithNotBefore and WithValidity
// override the validity window for that purpose.
package certs
