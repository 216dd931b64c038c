package serving

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/spf13/pflag"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"
)

// countingSARs is a fake API server that allows the users in allow to get
// any path, denies everyone else, fails for the user "broken", and counts
// the reviews it was asked for.
type countingSARs struct {
	allow map[string]bool
	calls int
}

func (c *countingSARs) client() *fake.Clientset {
	cs := fake.NewClientset()
	cs.PrependReactor("create", "subjectaccessreviews", func(a clienttesting.Action) (bool, runtime.Object, error) {
		c.calls++
		sar := a.(clienttesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview)
		if sar.Spec.User == "broken" {
			return true, nil, errors.New("api server unreachable")
		}
		out := sar.DeepCopy()
		if c.allow[sar.Spec.User] {
			out.Status = authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: "allowed by ClusterRoleBinding"}
		} else {
			out.Status = authorizationv1.SubjectAccessReviewStatus{Reason: "no RBAC policy matched"}
		}
		return true, out, nil
	})
	return cs
}

func TestSubjectAccessReviewerCachesDecisions(t *testing.T) {
	ctx := context.Background()
	clk := testingclock.NewFakeClock(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
	sars := &countingSARs{allow: map[string]bool{"prometheus": true}}
	a := NewSubjectAccessReviewer(sars.client(), DefaultAuthorizedTTL, 5*time.Second, clk)
	monitoring := []string{"system:monitoring"}

	authorize := func(user string, groups []string, path string, wantAllowed bool, wantCalls int) {
		t.Helper()
		allowed, reason, err := a.Authorize(ctx, user, groups, path)
		if err != nil {
			t.Fatalf("Authorize(%s, %s): %v", user, path, err)
		}
		if allowed != wantAllowed || reason == "" {
			t.Errorf("Authorize(%s, %s) = %v %q, want %v with the review's reason", user, path, allowed, reason, wantAllowed)
		}
		if sars.calls != wantCalls {
			t.Errorf("after Authorize(%s, %v, %s): %d reviews, want %d", user, groups, path, sars.calls, wantCalls)
		}
	}

	// Two scrapes within the TTL make one review.
	authorize("prometheus", monitoring, "/metrics", true, 1)
	clk.Step(9 * time.Second)
	authorize("prometheus", monitoring, "/metrics", true, 1)
	// Another user, other groups or another path is its own review.
	authorize("grafana", monitoring, "/metrics", false, 2)
	authorize("prometheus", []string{"system:authenticated"}, "/metrics", true, 3)
	authorize("prometheus", monitoring, "/debug/pprof/", true, 4)
	// After the authorized TTL, the allowed decision is asked again.
	clk.Step(2 * time.Second)
	authorize("prometheus", monitoring, "/metrics", true, 5)

	// A denial is remembered for the unauthorized TTL, then asked again.
	authorize("intruder", nil, "/metrics", false, 6)
	clk.Step(4 * time.Second)
	authorize("intruder", nil, "/metrics", false, 6)
	clk.Step(2 * time.Second)
	authorize("intruder", nil, "/metrics", false, 7)

	// An error is never remembered.
	for i := range 2 {
		if _, _, err := a.Authorize(ctx, "broken", nil, "/metrics"); err == nil {
			t.Fatal("Authorize for a failing review: no error")
		}
		if sars.calls != 8+i {
			t.Errorf("failed review %d: %d reviews, want %d", i+1, sars.calls, 8+i)
		}
	}
}

func TestSubjectAccessReviewerZeroTTLAsksEveryTime(t *testing.T) {
	sars := &countingSARs{allow: map[string]bool{"prometheus": true}}
	a := NewSubjectAccessReviewer(sars.client(), 0, 0, testingclock.NewFakeClock(time.Now()))
	for range 2 {
		if _, _, err := a.Authorize(context.Background(), "prometheus", nil, "/metrics"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := a.Authorize(context.Background(), "intruder", nil, "/metrics"); err != nil {
			t.Fatal(err)
		}
	}
	if sars.calls != 4 {
		t.Errorf("%d reviews with both TTLs 0, want 4", sars.calls)
	}
}

func TestOptionsNewAuthorizerUsesTheFlags(t *testing.T) {
	o := NewOptions(10257)
	if o.AuthorizedTTL != 10*time.Second || o.UnauthorizedTTL != 10*time.Second {
		t.Errorf("default TTLs %v/%v, want upstream's 10s/10s", o.AuthorizedTTL, o.UnauthorizedTTL)
	}
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--authorization-webhook-cache-authorized-ttl=1m", "--authorization-webhook-cache-unauthorized-ttl=3s"}); err != nil {
		t.Fatal(err)
	}
	a := o.NewAuthorizer(fake.NewClientset())
	if a.authorizedTTL != time.Minute || a.unauthorizedTTL != 3*time.Second {
		t.Errorf("NewAuthorizer TTLs %v/%v, want 1m/3s", a.authorizedTTL, a.unauthorizedTTL)
	}
}
