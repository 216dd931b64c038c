// Package certificates holds the controllers of CertificateSigningRequests,
// as upstream's pkg/controller/certificates does:
//
//   - the approver (upstream's csrapproving) approves a
//     kubernetes.io/kube-apiserver-client-kubelet CSR whose request is a
//     node client certificate (O=system:nodes, CN=system:node:<name>, client
//     auth only) when a SubjectAccessReview says its requester may create
//     certificatesigningrequests/nodeclient (a joining node's bootstrap token)
//     or, when the requester is the node the certificate names,
//     certificatesigningrequests/selfnodeclient (a node renewing its own).
//     kubernetes.io/kubelet-serving CSRs are not approved by default, as
//     upstream: a serving certificate's names are the node's own claim. With
//     ApproveKubeletServing, a serving CSR is approved when its requester is
//     the node it names and every DNS name and IP address it asks for is one
//     of that Node's status addresses.
//   - the signer (upstream's csrsigning) signs approved CSRs of the
//     kubernetes.io/kube-apiserver-client, kube-apiserver-client-kubelet and
//     kubelet-serving signers with the cluster CA, after checking the request
//     against what that signer may issue (subject, names, key usages); a
//     request the signer may not issue gets the Failed condition. The
//     certificate lasts the shorter of the signer's duration and the CSR's
//     spec.expirationSeconds, and never past the CA.
//   - the cleaner (upstream's csrcleaner) deletes CSRs that are done with:
//     approved or denied or failed ones after an hour, pending ones after a
//     day, and any whose issued certificate has expired.
package certificates
