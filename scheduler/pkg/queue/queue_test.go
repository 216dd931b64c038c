package queue

import (
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func pod(name string, prio int32) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name)}, Spec: corev1.PodSpec{Priority: &prio}}
}

func newQueue() (*Queue, *fakeClock) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	return New(WithClock(clk.now)), clk
}

func popName(t *testing.T, q *Queue) string {
	t.Helper()
	p, err := q.Pop()
	if err != nil {
		t.Fatal(err)
	}
	return p.Pod.Name
}

func TestPriorityThenAge(t *testing.T) {
	q, clk := newQueue()
	for _, p := range []*corev1.Pod{pod("low-old", 0), pod("high", 10), pod("low-new", 0), pod("mid", 5)} {
		q.Add(p)
		clk.step(time.Second)
	}
	var got []string
	for i := 0; i < 4; i++ {
		got = append(got, popName(t, q))
	}
	want := []string{"high", "mid", "low-old", "low-new"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order = %v, want %v", got, want)
		}
	}
}

func TestUnschedulableAndMove(t *testing.T) {
	tests := []struct {
		name          string
		unschedulable bool
		moveDuring    bool
		wait          time.Duration
		move          bool
		want          [3]int // active, backoff, unschedulable
	}{
		{name: "unschedulable waits", unschedulable: true, want: [3]int{0, 0, 1}},
		{name: "error backs off", unschedulable: false, want: [3]int{0, 1, 0}},
		{name: "cluster changed during the cycle", unschedulable: true, moveDuring: true, want: [3]int{0, 1, 0}},
		{name: "moved while backing off", unschedulable: true, move: true, want: [3]int{0, 1, 0}},
		{name: "moved after back-off", unschedulable: true, move: true, wait: 2 * time.Second, want: [3]int{1, 0, 0}},
		{name: "left over after five minutes", unschedulable: true, wait: 6 * time.Minute, want: [3]int{1, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, clk := newQueue()
			q.Add(pod("p", 0))
			p, _ := q.Pop()
			cycle := q.SchedulingCycle()
			if tt.moveDuring {
				q.MoveAllToActiveOrBackoffQueue()
			}
			q.AddUnschedulableIfNotPresent(p, tt.unschedulable, cycle)
			clk.step(tt.wait)
			if tt.move {
				q.MoveAllToActiveOrBackoffQueue()
			}
			q.flushUnschedulableLeftover()
			a, b, u := q.Lengths()
			if [3]int{a, b, u} != tt.want {
				t.Fatalf("lengths = %v, want %v", [3]int{a, b, u}, tt.want)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	q, clk := newQueue()
	q.Add(pod("p", 0))
	for attempt, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second} {
		p, _ := q.Pop()
		q.AddUnschedulableIfNotPresent(p, false, q.SchedulingCycle())
		clk.step(want - time.Millisecond)
		q.flushBackoffCompleted()
		if a, _, _ := q.Lengths(); a != 0 {
			t.Fatalf("attempt %d: left back-off before %v", attempt+1, want)
		}
		clk.step(time.Millisecond)
		q.flushBackoffCompleted()
		if a, _, _ := q.Lengths(); a != 1 {
			t.Fatalf("attempt %d: still backing off after %v", attempt+1, want)
		}
	}
}

func TestUpdateAndDelete(t *testing.T) {
	q, _ := newQueue()
	q.Add(pod("p", 0))
	p, _ := q.Pop()
	q.AddUnschedulableIfNotPresent(p, true, q.SchedulingCycle())

	// A status-only update leaves the pod where it is.
	old := pod("p", 0)
	statusOnly := old.DeepCopy()
	statusOnly.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse}}
	q.Update(old, statusOnly)
	if _, _, u := q.Lengths(); u != 1 {
		t.Fatal("status update moved the pod")
	}
	// A spec change gives it another chance (after back-off).
	changed := statusOnly.DeepCopy()
	changed.Spec.NodeSelector = map[string]string{"a": "b"}
	q.Update(statusOnly, changed)
	if a, b, u := q.Lengths(); u != 0 || a+b != 1 {
		t.Fatalf("lengths = %d %d %d", a, b, u)
	}
	q.Delete(changed)
	if a, b, u := q.Lengths(); a+b+u != 0 {
		t.Fatalf("lengths after delete = %d %d %d", a, b, u)
	}
	// An update for a pod being scheduled does not queue it twice.
	q.Add(pod("x", 0))
	x, _ := q.Pop()
	q.Update(x.Pod, x.Pod)
	if a, b, u := q.Lengths(); a+b+u != 0 {
		t.Fatalf("in-flight pod was queued again: %d %d %d", a, b, u)
	}
}

func TestPopBlocksUntilAddOrClose(t *testing.T) {
	q, _ := newQueue()
	got := make(chan string)
	go func() {
		p, err := q.Pop()
		if err != nil {
			got <- err.Error()
			return
		}
		got <- p.Pod.Name
	}()
	q.Add(pod("late", 0))
	if n := <-got; n != "late" {
		t.Fatalf("popped %q", n)
	}
	go func() {
		_, err := q.Pop()
		got <- err.Error()
	}()
	q.Close()
	if e := <-got; e != ErrClosed.Error() {
		t.Fatalf("Pop after Close: %q", e)
	}
}
