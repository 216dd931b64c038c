package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"skiff.dev/kubelet/test/harness"
)

// cronJobEvery is a CronJob that runs command every minute.
func cronJobEvery(name string, policy batchv1.ConcurrencyPolicy, command ...string) *batchv1.CronJob {
	grace := int64(1)
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.CronJobSpec{
			Schedule:          "* * * * *",
			ConcurrencyPolicy: policy,
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"cronjob": name}},
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy:                 corev1.RestartPolicyNever,
					TerminationGracePeriodSeconds: &grace,
					Containers:                    []corev1.Container{{Name: "c", Image: "busybox", Command: command}},
				}}},
			},
		},
	}
}

// cronJobs returns the Jobs of the CronJob name that are not being
// deleted, oldest first.
func (c *cluster) cronJobs(t *testing.T, name string) []batchv1.Job {
	t.Helper()
	list, err := c.client.BatchV1().Jobs("default").List(context.Background(), metav1.ListOptions{LabelSelector: "cronjob=" + name})
	if err != nil {
		t.Fatal(err)
	}
	var out []batchv1.Job
	for _, j := range list.Items {
		if j.DeletionTimestamp == nil {
			out = append(out, j)
		}
	}
	slices.SortFunc(out, func(a, b batchv1.Job) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	return out
}

func (c *cluster) cronJobEvent(t *testing.T, name, reason string) bool {
	t.Helper()
	list, err := c.client.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range list.Items {
		if ev.InvolvedObject.Kind == "CronJob" && ev.InvolvedObject.Name == name && ev.Reason == reason {
			return true
		}
	}
	return false
}

// checkScheduledJob checks that job is cj's Job for a minute after cj was
// created: named <cronjob>-<minutes since the epoch>, annotated with that
// time, controlled by cj.
func checkScheduledJob(t *testing.T, cj *batchv1.CronJob, job *batchv1.Job) time.Time {
	t.Helper()
	scheduled, err := time.Parse(time.RFC3339, job.Annotations[batchv1.CronJobScheduledTimestampAnnotation])
	if err != nil {
		t.Fatalf("job %s: scheduled-timestamp annotation: %v", job.Name, err)
	}
	if scheduled.Second() != 0 || scheduled.Before(cj.CreationTimestamp.Time) {
		t.Errorf("job %s scheduled at %v, for a CronJob created at %v", job.Name, scheduled, cj.CreationTimestamp)
	}
	if want := fmt.Sprintf("%s-%d", cj.Name, scheduled.Unix()/60); job.Name != want {
		t.Errorf("job name %s, want %s", job.Name, want)
	}
	if ref := metav1.GetControllerOf(job); ref == nil || ref.Kind != "CronJob" || ref.Name != cj.Name || ref.UID != cj.UID {
		t.Errorf("job %s controller %+v, want CronJob %s", job.Name, ref, cj.UID)
	}
	return scheduled
}

// TestCronJobs runs "* * * * *" CronJobs on the one-node cluster, with the
// Job controller running their pods: each gets its Job on the minute,
// named and annotated for it and owned by the CronJob; at the next minute
// Forbid leaves the running Job alone and Replace deletes it (and its
// pod) and starts the next; a CronJob whose Jobs succeed keeps only
// successfulJobsHistoryLimit of them.
func TestCronJobs(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	created := map[string]*batchv1.CronJob{}
	for _, cj := range []*batchv1.CronJob{
		cronJobEvery("forbid", batchv1.ForbidConcurrent, "sleep", "3600"),
		cronJobEvery("replace", batchv1.ReplaceConcurrent, "sleep", "3600"),
		cronJobEvery("history", batchv1.AllowConcurrent, "true"),
	} {
		if cj.Name == "history" {
			one := int32(1)
			cj.Spec.SuccessfulJobsHistoryLimit = &one
		}
		out, err := c.client.BatchV1().CronJobs("default").Create(ctx, cj, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created[cj.Name] = out
	}

	// Within a minute of their creation (and a margin for a loaded
	// machine), each has its first Job.
	first := map[string]batchv1.Job{}
	for _, name := range []string{"forbid", "replace", "history"} {
		harness.Poll(t, 90*time.Second, "the first Job of "+name, func() (bool, string) {
			jobs := c.cronJobs(t, name)
			if len(jobs) == 0 {
				return false, "no job"
			}
			first[name] = jobs[0]
			return true, ""
		})
		j := first[name]
		checkScheduledJob(t, created[name], &j)
	}
	harness.Poll(t, 30*time.Second, "status.active and lastScheduleTime of both", func() (bool, string) {
		for _, name := range []string{"forbid", "replace"} {
			cj, err := c.client.BatchV1().CronJobs("default").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			if len(cj.Status.Active) != 1 || cj.Status.Active[0].Name != first[name].Name || cj.Status.LastScheduleTime == nil {
				return false, fmt.Sprintf("%s: %+v", name, cj.Status)
			}
		}
		return true, ""
	})

	t.Run("Replace deletes the running Job at the next minute", func(t *testing.T) {
		old := first["replace"]
		var next batchv1.Job
		harness.Poll(t, 90*time.Second, "a second Job of replace", func() (bool, string) {
			jobs := c.cronJobs(t, "replace")
			for _, j := range jobs {
				if j.Name != old.Name {
					next = j
					return true, ""
				}
			}
			return false, fmt.Sprint(len(jobs), " jobs")
		})
		scheduled := checkScheduledJob(t, created["replace"], &next)
		if oldAt := checkScheduledJob(t, created["replace"], &old); !scheduled.After(oldAt) {
			t.Errorf("the new Job is for %v, the old one for %v", scheduled, oldAt)
		}
		harness.Poll(t, 60*time.Second, "the replaced Job's pod gone", func() (bool, string) {
			pods, err := c.client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "job-name=" + old.Name})
			if err != nil {
				return false, err.Error()
			}
			return len(pods.Items) == 0, fmt.Sprint(len(pods.Items), " pods")
		})
		harness.Poll(t, 30*time.Second, "the replaced Job gone and only the new one active", func() (bool, string) {
			_, err := c.client.BatchV1().Jobs("default").Get(ctx, old.Name, metav1.GetOptions{})
			cj, getErr := c.client.BatchV1().CronJobs("default").Get(ctx, "replace", metav1.GetOptions{})
			if getErr != nil {
				return false, getErr.Error()
			}
			ok := apierrors.IsNotFound(err) && len(cj.Status.Active) == 1 && cj.Status.Active[0].Name == next.Name &&
				c.cronJobEvent(t, "replace", "SuccessfulDelete")
			return ok, fmt.Sprintf("old job: %v; status %+v", err, cj.Status)
		})
	})

	t.Run("Forbid keeps the running Job and starts none beside it", func(t *testing.T) {
		harness.Poll(t, 90*time.Second, "JobAlreadyActive on forbid", func() (bool, string) {
			return c.cronJobEvent(t, "forbid", "JobAlreadyActive"), ""
		})
		jobs := c.cronJobs(t, "forbid")
		if len(jobs) != 1 || jobs[0].Name != first["forbid"].Name {
			t.Errorf("forbid's jobs %d (first %s), want only the first", len(jobs), first["forbid"].Name)
		}
	})

	t.Run("successfulJobsHistoryLimit keeps the newest succeeded Job", func(t *testing.T) {
		oldest := first["history"]
		harness.Poll(t, 180*time.Second, "one succeeded Job of history, not the first", func() (bool, string) {
			jobs := c.cronJobs(t, "history")
			if len(jobs) != 1 || jobs[0].Name == oldest.Name {
				return false, fmt.Sprint(len(jobs), " jobs")
			}
			for _, cond := range jobs[0].Status.Conditions {
				if cond.Type == batchv1.JobComplete && cond.Status == corev1.ConditionTrue {
					return true, ""
				}
			}
			return false, fmt.Sprintf("%s: %+v", jobs[0].Name, jobs[0].Status)
		})
		if _, err := c.client.BatchV1().Jobs("default").Get(ctx, oldest.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the first Job %s: %v, want NotFound", oldest.Name, err)
		}
		harness.Poll(t, 30*time.Second, "lastSuccessfulTime and the events of history", func() (bool, string) {
			cj, err := c.client.BatchV1().CronJobs("default").Get(ctx, "history", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			ok := cj.Status.LastSuccessfulTime != nil && c.cronJobEvent(t, "history", "SawCompletedJob") &&
				c.cronJobEvent(t, "history", "SuccessfulDelete")
			return ok, fmt.Sprintf("%+v", cj.Status)
		})
	})
}
