package etcd3

import (
	"context"
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
	"k8s.io/apimachinery/pkg/watch"

	"skiff.dev/apiserver/pkg/storage"
)

// TestStore runs the scripts in testdata/ against a Store over a real
// embedded etcd, a fresh one per script so that revisions start at 1 and the
// expected output can name them. Run with -rewrite to regenerate the output.
//
// The commands (ConfigMaps in namespace ns, key /registry/configmaps/ns/NAME):
//
//	create name=N [labels=k=v,...] [data=S]     Create
//	get name=N                                  Get
//	update name=N [labels=...] [data=S] [rv=R] [race=V]
//	                                            GuaranteedUpdate, R a precondition; with race,
//	                                            another writer annotates raced=V mid-update
//	delete name=N [rv=R]                        Delete, R a precondition
//	list [rv=R] [match=Exact|NotOlderThan] [limit=L] [continue] [labels=SEL] [fields=SEL]
//	                                            GetList of the prefix; continue takes the last token
//	watch id=W [rv=R] [name=N]                  Watch the prefix (or one key) after R
//	next id=W n=K                               the next K events of W (5 s deadline)
//	stop id=W                                   Stop W; prints what was left and that it closed
//	compact rev=R                               etcd compaction up to R
//	rev                                         CurrentRevision
func TestStore(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		h := newHarness(t)
		datadriven.RunTest(t, path, h.run)
	})
}

// startEtcd runs a single-member etcd on loopback in a temporary directory
// and returns an in-process client to it.
func startEtcd(t *testing.T) (*embed.Etcd, *clientv3.Client) {
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

// newTestStore is a Store of ConfigMaps in protobuf, as the server stores them.
func newTestStore(c *clientv3.Client) *Store {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	cf := serializer.NewCodecFactory(scheme)
	var info runtime.SerializerInfo
	for _, i := range cf.SupportedMediaTypes() {
		if i.MediaType == runtime.ContentTypeProtobuf {
			info = i
		}
	}
	codec := cf.CodecForVersions(info.Serializer, info.Serializer, corev1.SchemeGroupVersion, corev1.SchemeGroupVersion)
	return New(Config{
		Client: c, Codec: codec,
		NewFunc:        func() runtime.Object { return &corev1.ConfigMap{} },
		NewListFunc:    func() runtime.Object { return &corev1.ConfigMapList{} },
		ResourcePrefix: "/registry/configmaps/",
		GVK:            corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		RequestTimeout: 5 * time.Second,
	})
}

type harness struct {
	t       *testing.T
	client  *clientv3.Client
	store   *Store
	watches map[string]watch.Interface
	cont    string
}

func newHarness(t *testing.T) *harness {
	_, c := startEtcd(t)
	h := &harness{t: t, client: c, store: newTestStore(c), watches: map[string]watch.Interface{}}
	t.Cleanup(func() {
		for _, w := range h.watches {
			w.Stop()
		}
	})
	return h
}

func arg(d *datadriven.TestData, key string) string {
	for _, a := range d.CmdArgs {
		if a.Key == key {
			return strings.Join(a.Vals, ",")
		}
	}
	return ""
}

func key(name string) string { return "/registry/configmaps/ns/" + name }

func configMap(t *testing.T, d *datadriven.TestData) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: arg(d, "name"), Namespace: "ns"}}
	if l := arg(d, "labels"); l != "" {
		set, err := labels.ConvertSelectorToLabelsMap(l)
		if err != nil {
			d.Fatalf(t, "labels: %v", err)
		}
		cm.Labels = set
	}
	if s := arg(d, "data"); s != "" {
		cm.Data = map[string]string{"v": s}
	}
	return cm
}

// attrs are a ConfigMap's labels and its selectable fields.
func attrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, err
	}
	return labels.Set(m.GetLabels()), fields.Set{"metadata.name": m.GetName(), "metadata.namespace": m.GetNamespace()}, nil
}

// describe prints an object as the scripts show it.
func describe(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	s := fmt.Sprintf("%s rv=%s", m.GetName(), m.GetResourceVersion())
	if l := m.GetLabels(); len(l) > 0 {
		s += " labels=" + labels.Set(l).String()
	}
	if cm, ok := obj.(*corev1.ConfigMap); ok && cm.Data["v"] != "" {
		s += " data=" + cm.Data["v"]
	}
	if a := m.GetAnnotations(); len(a) > 0 {
		keys := make([]string, 0, len(a))
		for k := range a {
			keys = append(keys, k+"="+a[k])
		}
		sort.Strings(keys)
		s += " annotations=" + strings.Join(keys, ",")
	}
	return s
}

// describeErr names the storage sentinel an error wraps, then its text.
func describeErr(err error) string {
	var ce *storage.ContinueExpiredError
	if errors.As(err, &ce) {
		return "error (continue expired, gone): " + err.Error()
	}
	for _, s := range []error{storage.ErrNotFound, storage.ErrAlreadyExists, storage.ErrConflict, storage.ErrGone,
		storage.ErrUnavailable, storage.ErrTimeout, storage.ErrInvalid, storage.ErrTooLargeResourceVersion} {
		if errors.Is(err, s) {
			return fmt.Sprintf("error (%s): %v", s, err)
		}
	}
	return "error: " + err.Error()
}

func describeEvent(e watch.Event) string {
	if e.Type == watch.Error {
		if st, ok := e.Object.(*metav1.Status); ok {
			return fmt.Sprintf("ERROR %d %s", st.Code, st.Reason)
		}
	}
	return fmt.Sprintf("%s %s", e.Type, describe(e.Object))
}

func (h *harness) run(t *testing.T, d *datadriven.TestData) string {
	ctx := context.Background()
	switch d.Cmd {
	case "create":
		out, err := h.store.Create(ctx, key(arg(d, "name")), configMap(t, d))
		if err != nil {
			return describeErr(err)
		}
		return describe(out)
	case "get":
		out, err := h.store.Get(ctx, key(arg(d, "name")))
		if err != nil {
			return describeErr(err)
		}
		return describe(out)
	case "update":
		var pre *storage.Preconditions
		if rv := arg(d, "rv"); rv != "" {
			pre = &storage.Preconditions{ResourceVersion: &rv}
		}
		want := configMap(t, d)
		race := arg(d, "race")
		var seen []string
		out, err := h.store.GuaranteedUpdate(ctx, key(want.Name), pre, false, func(existing runtime.Object) (runtime.Object, error) {
			seen = append(seen, describe(existing))
			if race != "" && len(seen) == 1 {
				// Another writer changes the object between this read and
				// the write: the compare-and-swap fails and the update
				// runs again on the other writer's result.
				if _, err := h.store.GuaranteedUpdate(ctx, key(want.Name), nil, false, func(o runtime.Object) (runtime.Object, error) {
					cm := o.(*corev1.ConfigMap).DeepCopy()
					cm.Annotations = map[string]string{"raced": race}
					return cm, nil
				}); err != nil {
					return nil, err
				}
			}
			cm := existing.(*corev1.ConfigMap).DeepCopy()
			cm.Labels, cm.Data = want.Labels, want.Data
			return cm, nil
		})
		if err != nil {
			return describeErr(err)
		}
		if race != "" {
			return fmt.Sprintf("tried on: %s\nresult: %s", strings.Join(seen, "; "), describe(out))
		}
		return describe(out)
	case "delete":
		var pre *storage.Preconditions
		if rv := arg(d, "rv"); rv != "" {
			pre = &storage.Preconditions{ResourceVersion: &rv}
		}
		out, err := h.store.Delete(ctx, key(arg(d, "name")), pre, nil)
		if err != nil {
			return describeErr(err)
		}
		return describe(out)
	case "list":
		return h.list(ctx, d)
	case "watch":
		k, recursive := "/registry/configmaps/ns", true
		if n := arg(d, "name"); n != "" {
			k, recursive = key(n), false
		}
		w, err := h.store.Watch(ctx, k, storage.ListOptions{ResourceVersion: arg(d, "rv"), Recursive: recursive})
		if err != nil {
			return describeErr(err)
		}
		h.watches[arg(d, "id")] = w
		return "ok"
	case "next":
		var n int
		d.ScanArgs(t, "n", &n)
		w := h.watches[arg(d, "id")]
		var b strings.Builder
		deadline := time.After(5 * time.Second)
		for i := 0; i < n; i++ {
			select {
			case e, ok := <-w.ResultChan():
				if !ok {
					b.WriteString("(closed)\n")
					return b.String()
				}
				b.WriteString(describeEvent(e) + "\n")
			case <-deadline:
				b.WriteString("(no more events in 5s)\n")
				return b.String()
			}
		}
		return b.String()
	case "stop":
		w := h.watches[arg(d, "id")]
		w.Stop()
		delete(h.watches, arg(d, "id"))
		var b strings.Builder
		deadline := time.After(5 * time.Second)
		for {
			select {
			case e, ok := <-w.ResultChan():
				if !ok {
					b.WriteString("(closed)\n")
					return b.String()
				}
				b.WriteString(describeEvent(e) + "\n")
			case <-deadline:
				b.WriteString("(not closed in 5s)\n")
				return b.String()
			}
		}
	case "compact":
		var rev int64
		d.ScanArgs(t, "rev", &rev)
		if _, err := h.client.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
			return "error: " + err.Error()
		}
		return "ok"
	case "rev":
		rev, err := h.store.CurrentRevision(ctx)
		if err != nil {
			return describeErr(err)
		}
		return fmt.Sprint(rev)
	}
	d.Fatalf(t, "unknown command %q", d.Cmd)
	return ""
}

func (h *harness) list(ctx context.Context, d *datadriven.TestData) string {
	opts := storage.ListOptions{
		ResourceVersion:      arg(d, "rv"),
		ResourceVersionMatch: metav1.ResourceVersionMatch(arg(d, "match")),
		Recursive:            true,
		Predicate:            storage.SelectionPredicate{GetAttrs: attrs},
	}
	if l := arg(d, "labels"); l != "" {
		sel, err := labels.Parse(l)
		if err != nil {
			d.Fatalf(h.t, "labels: %v", err)
		}
		opts.Predicate.Label = sel
	}
	if f := arg(d, "fields"); f != "" {
		sel, err := fields.ParseSelector(f)
		if err != nil {
			d.Fatalf(h.t, "fields: %v", err)
		}
		opts.Predicate.Field = sel
	}
	if d.HasArg("limit") {
		d.ScanArgs(h.t, "limit", &opts.Predicate.Limit)
	}
	if d.HasArg("continue") {
		opts.Predicate.Continue = h.cont
	}
	list := &corev1.ConfigMapList{}
	if err := h.store.GetList(ctx, "/registry/configmaps/ns", opts, list); err != nil {
		var ce *storage.ContinueExpiredError
		if errors.As(err, &ce) {
			h.cont = ce.Continue
		}
		return describeErr(err)
	}
	h.cont = list.Continue
	var b strings.Builder
	fmt.Fprintf(&b, "list rv=%s", list.ResourceVersion)
	if list.Continue != "" {
		b.WriteString(" continue")
	}
	if list.RemainingItemCount != nil {
		fmt.Fprintf(&b, " remaining=%d", *list.RemainingItemCount)
	}
	b.WriteString("\n")
	for i := range list.Items {
		b.WriteString(describe(&list.Items[i]) + "\n")
	}
	return b.String()
}
