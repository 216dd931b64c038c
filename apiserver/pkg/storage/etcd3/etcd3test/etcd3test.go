// Package etcd3test holds what the data-driven tests of the storage packages
// (etcd3, cacher) share: a real embedded etcd per test, a protobuf codec of
// ConfigMaps as the server stores them, and the way the scripts in their
// testdata read arguments and print objects and errors.
package etcd3test

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"skiff.dev/apiserver/pkg/storage"
)

// Prefix is the key prefix of the ConfigMaps the scripts write; Key(name)
// is one in namespace ns.
const Prefix = "/registry/configmaps/"

func Key(name string) string { return Prefix + "ns/" + name }

// StartEtcd runs a single-member etcd on loopback in a temporary directory,
// stopped when the test ends, and returns it with an in-process client.
func StartEtcd(t *testing.T) (*embed.Etcd, *clientv3.Client) {
	t.Helper()
	dir := t.TempDir()
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.Name = "test"
	cfg.Logger = "zap"
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{filepath.Join(dir, "etcd.log")}
	cfg.AutoCompactionMode = ""
	u, _ := url.Parse("http://127.0.0.1:0")
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*u}, []url.URL{*u}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*u}, []url.URL{*u}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatalf("starting etcd: %v", err)
	}
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		t.Fatal("etcd did not become ready in 30s")
	}
	c := v3client.New(e.Server)
	t.Cleanup(func() { _ = c.Close() })
	return e, c
}

// Codec encodes ConfigMaps as protobuf and decodes them, as the server's
// stores do.
func Codec() runtime.Codec {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	cf := serializer.NewCodecFactory(scheme)
	var info runtime.SerializerInfo
	for _, i := range cf.SupportedMediaTypes() {
		if i.MediaType == runtime.ContentTypeProtobuf {
			info = i
		}
	}
	return cf.CodecForVersions(info.Serializer, info.Serializer, corev1.SchemeGroupVersion, corev1.SchemeGroupVersion)
}

// Arg is the value of a script argument, "" when absent.
func Arg(d *datadriven.TestData, key string) string {
	for _, a := range d.CmdArgs {
		if a.Key == key {
			return strings.Join(a.Vals, ",")
		}
	}
	return ""
}

// ConfigMap is the object of name=, labels= (k=v,...) and data= (the value
// of data key v).
func ConfigMap(t *testing.T, d *datadriven.TestData) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: Arg(d, "name"), Namespace: "ns"}}
	if l := Arg(d, "labels"); l != "" {
		set, err := labels.ConvertSelectorToLabelsMap(l)
		if err != nil {
			d.Fatalf(t, "labels: %v", err)
		}
		cm.Labels = set
	}
	if s := Arg(d, "data"); s != "" {
		cm.Data = map[string]string{"v": s}
	}
	return cm
}

// Predicate is the selection of labels=, fields= and limit=.
func Predicate(t *testing.T, d *datadriven.TestData) storage.SelectionPredicate {
	p := storage.SelectionPredicate{GetAttrs: Attrs}
	if l := Arg(d, "labels"); l != "" {
		sel, err := labels.Parse(l)
		if err != nil {
			d.Fatalf(t, "labels: %v", err)
		}
		p.Label = sel
	}
	if f := Arg(d, "fields"); f != "" {
		sel, err := fields.ParseSelector(f)
		if err != nil {
			d.Fatalf(t, "fields: %v", err)
		}
		p.Field = sel
	}
	if d.HasArg("limit") {
		d.ScanArgs(t, "limit", &p.Limit)
	}
	return p
}

// Attrs are a ConfigMap's labels and its selectable fields.
func Attrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, err
	}
	return labels.Set(m.GetLabels()), fields.Set{"metadata.name": m.GetName(), "metadata.namespace": m.GetNamespace()}, nil
}

// Describe prints an object as the scripts show it: name, resourceVersion,
// labels, data and annotations.
func Describe(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	s := fmt.Sprintf("%s rv=%s", m.GetName(), m.GetResourceVersion())
	if m.GetName() == "" {
		s = "rv=" + m.GetResourceVersion()
	}
	if l := m.GetLabels(); len(l) > 0 {
		s += " labels=" + labels.Set(l).String()
	}
	if cm, ok := obj.(*corev1.ConfigMap); ok && cm.Data["v"] != "" {
		s += " data=" + cm.Data["v"]
	}
	if a := m.GetAnnotations(); len(a) > 0 {
		kv := make([]string, 0, len(a))
		for k := range a {
			kv = append(kv, k+"="+a[k])
		}
		sort.Strings(kv)
		s += " annotations=" + strings.Join(kv, ",")
	}
	return s
}

// DescribeErr names the storage sentinel an error wraps; with detail, the
// error's text follows (leave it out where it carries gRPC detail that
// varies from run to run).
func DescribeErr(err error, detail bool) string {
	var ce *storage.ContinueExpiredError
	if errors.As(err, &ce) {
		return "error (continue expired, gone): " + err.Error()
	}
	for _, s := range []error{storage.ErrNotFound, storage.ErrAlreadyExists, storage.ErrConflict, storage.ErrGone,
		storage.ErrUnavailable, storage.ErrTimeout, storage.ErrInvalid, storage.ErrTooLargeResourceVersion} {
		if errors.Is(err, s) {
			if !detail {
				return fmt.Sprintf("error (%s)", s)
			}
			return fmt.Sprintf("error (%s): %v", s, err)
		}
	}
	return "error: " + err.Error()
}
