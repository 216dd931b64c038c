package ttlafterfinished

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

var now = time.Unix(1_700_000_000, 0)

func finishedJob(name string, ttl *int32, finishedAgo time.Duration, cond batchv1.JobConditionType) *batchv1.Job {
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid")},
		Spec:       batchv1.JobSpec{TTLSecondsAfterFinished: ttl},
	}
	if cond != "" {
		j.Status.Conditions = []batchv1.JobCondition{{Type: cond, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-finishedAgo))}}
	}
	return j
}

func TestSync(t *testing.T) {
	tests := []struct {
		name       string
		job        *batchv1.Job
		step       time.Duration
		wantDelete bool
		wantEvent  string
	}{
		{name: "complete, TTL passed", job: finishedJob("a", ptr.To[int32](10), 11*time.Second, batchv1.JobComplete), wantDelete: true},
		{name: "failed, TTL 0", job: finishedJob("a", ptr.To[int32](0), 0, batchv1.JobFailed), wantDelete: true},
		{name: "TTL not passed", job: finishedJob("a", ptr.To[int32](100), 10*time.Second, batchv1.JobComplete)},
		{name: "TTL passes later", job: finishedJob("a", ptr.To[int32](100), 10*time.Second, batchv1.JobComplete), step: 90 * time.Second, wantDelete: true},
		{name: "no TTL", job: finishedJob("a", nil, time.Hour, batchv1.JobComplete)},
		{name: "not finished", job: finishedJob("a", ptr.To[int32](0), 0, "")},
		{name: "no finish time", job: func() *batchv1.Job {
			j := finishedJob("a", ptr.To[int32](0), 0, batchv1.JobComplete)
			j.Status.Conditions[0].LastTransitionTime = metav1.Time{}
			return j
		}(), wantEvent: "Warning InvalidJobStatus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewSimpleClientset([]runtime.Object{tt.job}...)
			clk := clocktesting.NewFakeClock(now)
			rec := record.NewFakeRecorder(10)
			factory := informers.NewSharedInformerFactory(client, 0)
			inf := factory.Batch().V1().Jobs()
			c := NewController(client, inf, rec, nil, Options{Clock: clk})
			_ = inf.Informer().GetIndexer().Add(tt.job)
			if err := c.sync(context.Background(), "default/a"); err != nil {
				t.Fatal(err)
			}
			if tt.step > 0 {
				// The job was requeued for when its TTL passes: the
				// queue's clock releases it then, not before.
				clk.Step(tt.step - time.Second)
				if c.queue.Len() != 0 {
					t.Fatal("requeued too early")
				}
				clk.Step(time.Second)
				if err := waitLen(c, 1); err != nil {
					t.Fatal(err)
				}
				key, _ := c.queue.Get()
				c.queue.Done(key)
				if err := c.sync(context.Background(), key); err != nil {
					t.Fatal(err)
				}
			}
			var deletes []core.DeleteActionImpl
			for _, a := range client.Actions() {
				if d, ok := a.(core.DeleteActionImpl); ok {
					deletes = append(deletes, d)
				}
			}
			if got := len(deletes) == 1; got != tt.wantDelete {
				t.Fatalf("deleted = %v, want %v (actions %v)", got, tt.wantDelete, client.Actions())
			}
			if tt.wantDelete {
				opts := deletes[0].GetDeleteOptions()
				if opts.PropagationPolicy == nil || *opts.PropagationPolicy != metav1.DeletePropagationForeground ||
					opts.Preconditions == nil || *opts.Preconditions.UID != tt.job.UID {
					t.Errorf("delete options = %+v", opts)
				}
			}
			select {
			case e := <-rec.Events:
				if tt.wantEvent == "" || !strings.HasPrefix(e, tt.wantEvent) {
					t.Errorf("event %q, want %q", e, tt.wantEvent)
				}
			default:
				if tt.wantEvent != "" {
					t.Errorf("no event, want %q", tt.wantEvent)
				}
			}
		})
	}
}

// waitLen waits (in real time, briefly) for the queue's delaying goroutine
// to move a due item into the queue.
func waitLen(c *Controller, n int) error {
	return wait.PollUntilContextTimeout(context.Background(), time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return c.queue.Len() >= n, nil
	})
}

func TestEnqueueOnlyFinishedJobsWithTTL(t *testing.T) {
	client := fake.NewSimpleClientset()
	inf := informers.NewSharedInformerFactory(client, 0).Batch().V1().Jobs()
	c := NewController(client, inf, record.NewFakeRecorder(1), nil, Options{Clock: clocktesting.NewFakeClock(now)})
	c.enqueueIfNeeded(finishedJob("running", ptr.To[int32](1), 0, ""))
	c.enqueueIfNeeded(finishedJob("nottl", nil, 0, batchv1.JobComplete))
	c.enqueueIfNeeded(finishedJob("done", ptr.To[int32](1), 0, batchv1.JobFailed))
	if c.queue.Len() != 1 {
		t.Fatalf("queue len = %d, want 1", c.queue.Len())
	}
	if key, _ := c.queue.Get(); key != "default/done" {
		t.Errorf("queued %q", key)
	}
}
