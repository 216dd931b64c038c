package certs

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// KubeconfigName is the name of the cluster and of the context in every
// kubeconfig written by this package.
const KubeconfigName = "skiff"

// Kubeconfig returns a kubeconfig for user that reaches server, trusts ca and
// authenticates with kp, everything embedded, with its only context current.
func Kubeconfig(server string, ca *CA, user string, kp *KeyPair) (*clientcmdapi.Config, error) {
	keyPEM, err := kp.KeyPEM()
	if err != nil {
		return nil, err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[KubeconfigName] = &clientcmdapi.Cluster{
		Server:                   server,
		CertificateAuthorityData: ca.CertPEM(),
	}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{
		ClientCertificateData: kp.CertPEM(),
		ClientKeyData:         keyPEM,
	}
	cfg.Contexts[KubeconfigName] = &clientcmdapi.Context{
		Cluster:  KubeconfigName,
		AuthInfo: user,
	}
	cfg.CurrentContext = KubeconfigName
	return cfg, nil
}

// WriteKubeconfig writes the kubeconfig built by Kubeconfig to path, mode 0600
// since it holds a private key.
func WriteKubeconfig(path, server string, ca *CA, user string, kp *KeyPair) error {
	data, err := renderKubeconfig(server, ca, user, kp)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), confDirMode); err != nil {
		return err
	}
	return writeFileAtomic(path, data, keyFileMode)
}

func renderKubeconfig(server string, ca *CA, user string, kp *KeyPair) ([]byte, error) {
	cfg, err := Kubeconfig(server, ca, user, kp)
	if err != nil {
		return nil, err
	}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("encoding kubeconfig for %q: %w", user, err)
	}
	return data, nil
}
