// Package certificate gives the kubelet its certificates through the
// certificates.k8s.io API, as upstream's kubelet does:
//
//   - TLS bootstrap (LoadClientCert): a kubelet started with only a
//     bootstrap kubeconfig (a bootstrap token) makes a key, asks for a
//     client certificate with a CertificateSigningRequest of signer
//     kubernetes.io/kube-apiserver-client-kubelet for
//     CN=system:node:<node>, O=system:nodes, waits for it to be approved and
//     signed, keeps it in the certificate directory
//     (kubelet-client-current.pem, key and certificate in one file) and writes
//     the kubeconfig that uses it;
//   - client certificate rotation (NewClientManager, UpdateTransport):
//     client-go's certificate manager asks for a new certificate at 70 to 90
//     % of the current one's life, and the transport picks it up and closes
//     the connections made with the old one;
//   - serving certificates (NewServerManager): the kubelet's HTTPS
//     certificate from the kubernetes.io/kubelet-serving signer, for the
//     node's names and addresses, renewed the same way.
package certificate
