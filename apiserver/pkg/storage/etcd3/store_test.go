package etcd3

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"skiff.dev/apiserver/pkg/storage"
	"skiff.dev/apiserver/pkg/storage/etcd3/etcd3test"
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
//	watch id=W [rv=R] [name=N] [labels=SEL] [fields=SEL]
//	                                            Watch the prefix (or one key) after R
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

// newTestStore is a Store of ConfigMaps in protobuf, as the server stores them.
func newTestStore(c *clientv3.Client) *Store {
	codec := etcd3test.Codec()
	return New(Config{
		Client: c, Codec: codec,
		NewFunc:        func() runtime.Object { return &corev1.ConfigMap{} },
		NewListFunc:    func() runtime.Object { return &corev1.ConfigMapList{} },
		ResourcePrefix: etcd3test.Prefix,
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
	_, c := etcd3test.StartEtcd(t)
	h := &harness{t: t, client: c, store: newTestStore(c), watches: map[string]watch.Interface{}}
	t.Cleanup(func() {
		for _, w := range h.watches {
			w.Stop()
		}
	})
	return h
}

func describeEvent(e watch.Event) string {
	if e.Type == watch.Error {
		if st, ok := e.Object.(*metav1.Status); ok {
			return fmt.Sprintf("ERROR %d %s", st.Code, st.Reason)
		}
	}
	return fmt.Sprintf("%s %s", e.Type, etcd3test.Describe(e.Object))
}

func (h *harness) run(t *testing.T, d *datadriven.TestData) string {
	ctx := context.Background()
	switch d.Cmd {
	case "create":
		out, err := h.store.Create(ctx, etcd3test.Key(etcd3test.Arg(d, "name")), etcd3test.ConfigMap(t, d))
		if err != nil {
			return etcd3test.DescribeErr(err, true)
		}
		return etcd3test.Describe(out)
	case "get":
		out, err := h.store.Get(ctx, etcd3test.Key(etcd3test.Arg(d, "name")))
		if err != nil {
			return etcd3test.DescribeErr(err, true)
		}
		return etcd3test.Describe(out)
	case "update":
		var pre *storage.Preconditions
		if rv := etcd3test.Arg(d, "rv"); rv != "" {
			pre = &storage.Preconditions{ResourceVersion: &rv}
		}
		want := etcd3test.ConfigMap(t, d)
		race := etcd3test.Arg(d, "race")
		var seen []string
		out, err := h.store.GuaranteedUpdate(ctx, etcd3test.Key(want.Name), pre, false, func(existing runtime.Object) (runtime.Object, error) {
			seen = append(seen, etcd3test.Describe(existing))
			if race != "" && len(seen) == 1 {
				// Another writer changes the object between this read and
				// the write: the compare-and-swap fails and the update
				// runs again on the other writer's result.
				if _, err := h.store.GuaranteedUpdate(ctx, etcd3test.Key(want.Name), nil, false, func(o runtime.Object) (runtime.Object, error) {
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
			return etcd3test.DescribeErr(err, true)
		}
		if race != "" {
			return fmt.Sprintf("tried on: %s\nresult: %s", strings.Join(seen, "; "), etcd3test.Describe(out))
		}
		return etcd3test.Describe(out)
	case "delete":
		var pre *storage.Preconditions
		if rv := etcd3test.Arg(d, "rv"); rv != "" {
			pre = &storage.Preconditions{ResourceVersion: &rv}
		}
		out, err := h.store.Delete(ctx, etcd3test.Key(etcd3test.Arg(d, "name")), pre, nil)
		if err != nil {
			return etcd3test.DescribeErr(err, true)
		}
		return etcd3test.Describe(out)
	case "list":
		return h.list(ctx, d)
	case "watch":
		k, recursive := "/registry/configmaps/ns", true
		if n := etcd3test.Arg(d, "name"); n != "" {
			k, recursive = etcd3test.Key(n), false
		}
		w, err := h.store.Watch(ctx, k, storage.ListOptions{ResourceVersion: etcd3test.Arg(d, "rv"), Recursive: recursive, Predicate: etcd3test.Predicate(t, d)})
		if err != nil {
			return etcd3test.DescribeErr(err, true)
		}
		h.watches[etcd3test.Arg(d, "id")] = w
		return "ok"
	case "next":
		var n int
		d.ScanArgs(t, "n", &n)
		return drain(h.watches[etcd3test.Arg(d, "id")], n)
	case "stop":
		w := h.watches[etcd3test.Arg(d, "id")]
		w.Stop()
		delete(h.watches, etcd3test.Arg(d, "id"))
		return drain(w, -1)
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
			return etcd3test.DescribeErr(err, true)
		}
		return fmt.Sprint(rev)
	}
	d.Fatalf(t, "unknown command %q", d.Cmd)
	return ""
}

func (h *harness) list(ctx context.Context, d *datadriven.TestData) string {
	opts := storage.ListOptions{
		ResourceVersion:      etcd3test.Arg(d, "rv"),
		ResourceVersionMatch: metav1.ResourceVersionMatch(etcd3test.Arg(d, "match")),
		Recursive:            true,
		Predicate:            etcd3test.Predicate(h.t, d),
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
		return etcd3test.DescribeErr(err, true)
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
		b.WriteString(etcd3test.Describe(&list.Items[i]) + "\n")
	}
	return b.String()
}

// drain prints the next n events of w (all until it closes when n < 0),
// waiting at most 5 s.
func drain(w watch.Interface, n int) string {
	var b strings.Builder
	deadline := time.After(5 * time.Second)
	for i := 0; n < 0 || i < n; i++ {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				b.WriteString("(closed)\n")
				return b.String()
			}
			b.WriteString(describeEvent(e) + "\n")
		case <-deadline:
			b.WriteString("(nothing more in 5s)\n")
			return b.String()
		}
	}
	return b.String()
}
