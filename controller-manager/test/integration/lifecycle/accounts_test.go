package lifecycle

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"skiff.dev/controller-manager/pkg/controller/rootcacertpublisher"
	"skiff.dev/controller-manager/pkg/controller/serviceaccount"
)

func TestDefaultServiceAccountAndRootCA(t *testing.T) {
	e := start(t)
	ns := e.informers.Core().V1().Namespaces()
	sac, err := serviceaccount.NewController(e.client, ns, e.informers.Core().V1().ServiceAccounts(), e.recorder, nil, serviceaccount.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ca := e.caBundle()
	pub, err := rootcacertpublisher.NewController(e.client, ns, e.informers.Core().V1().ConfigMaps(), e.recorder, nil, rootcacertpublisher.Options{RootCA: ca})
	if err != nil {
		t.Fatal(err)
	}
	e.run("service accounts", sac.Run)
	e.run("root CA publisher", pub.Run)
	if _, err := e.client.CoreV1().Namespaces().Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fresh"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	saThere := func() (bool, error) {
		_, err := e.client.CoreV1().ServiceAccounts("fresh").Get(e.ctx, "default", metav1.GetOptions{})
		if ok, err2 := gone(err); ok || err2 != nil {
			return false, err2
		}
		return err == nil, err
	}
	caThere := func() (bool, error) {
		cm, err := e.client.CoreV1().ConfigMaps("fresh").Get(e.ctx, rootcacertpublisher.ConfigMapName, metav1.GetOptions{})
		if ok, err2 := gone(err); ok || err2 != nil {
			return false, err2
		}
		if err != nil {
			return false, err
		}
		return cm.Data["ca.crt"] == string(ca) && cm.Annotations["kubernetes.io/description"] == rootcacertpublisher.Description, nil
	}
	e.poll(t, "the default ServiceAccount", saThere)
	e.poll(t, "the kube-root-ca.crt ConfigMap", caThere)

	if err := e.client.CoreV1().ServiceAccounts("fresh").Delete(e.ctx, "default", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.client.CoreV1().ConfigMaps("fresh").Delete(e.ctx, rootcacertpublisher.ConfigMapName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.poll(t, "the default ServiceAccount to come back", saThere)
	e.poll(t, "the kube-root-ca.crt ConfigMap to come back", caThere)

	cm, err := e.client.CoreV1().ConfigMaps("fresh").Get(e.ctx, rootcacertpublisher.ConfigMapName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["ca.crt"] = "tampered"
	if _, err := e.client.CoreV1().ConfigMaps("fresh").Update(e.ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.poll(t, "the edited kube-root-ca.crt to be put back", caThere)
}
