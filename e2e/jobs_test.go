package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"skiff.dev/kubelet/test/harness"
)

// A Job of 5 completions, 2 at a time.
const fiveJob = `apiVersion: batch/v1
kind: Job
metadata:
  name: five
spec:
  completions: 5
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers:
      - name: main
        image: busybox
        command: ["sh", "-c", "echo done"]
`

// An Indexed Job whose pods print the index they see.
const indexedJob = `apiVersion: batch/v1
kind: Job
metadata:
  name: indexed
spec:
  completions: 3
  parallelism: 3
  completionMode: Indexed
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers:
      - name: main
        image: busybox
        command: ["sh", "-c", "echo index=$JOB_COMPLETION_INDEX"]
`

// A Job whose pods always fail: backoffLimit 1 allows one retry, after
// the 10s back-off.
const failingJob = `apiVersion: batch/v1
kind: Job
metadata:
  name: failing
spec:
  backoffLimit: 1
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers:
      - name: main
        image: busybox
        command: ["sh", "-c", "exit 3"]
`

const webRC = `apiVersion: v1
kind: ReplicationController
metadata:
  name: rc-web
spec:
  replicas: 2
  selector: {app: rc-web}
  template:
    metadata:
      labels: {app: rc-web}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: web
        image: busybox
        command: ["sleep", "3600"]
`

// TestJobs runs Jobs and a ReplicationController on the one-node cluster
// with real containers.
func TestJobs(t *testing.T) {
	c := startCluster(t)
	for name, manifest := range map[string]string{"five": fiveJob, "indexed": indexedJob, "failing": failingJob, "rc": webRC} {
		path := c.dir + "/" + name + ".yaml"
		writeFile(t, path, manifest)
		c.kubectl(t, "apply", "-f", path)
	}
	t.Run("completions and parallelism", func(t *testing.T) {
		t.Parallel()
		job := c.waitJob(t, "five", batchv1.JobComplete)
		if job.Status.Succeeded != 5 || job.Status.Failed != 0 || job.Status.CompletionTime == nil {
			t.Errorf("status = %+v", job.Status)
		}
		if pods := c.jobPods(t, "five"); len(pods) != 5 {
			t.Errorf("%d pods, want 5", len(pods))
		}
	})
	t.Run("indexed pods see their index", func(t *testing.T) {
		t.Parallel()
		job := c.waitJob(t, "indexed", batchv1.JobComplete)
		if job.Status.CompletedIndexes != "0-2" {
			t.Errorf("completedIndexes = %q", job.Status.CompletedIndexes)
		}
		pods := c.jobPods(t, "indexed")
		if len(pods) != 3 {
			t.Fatalf("%d pods, want 3", len(pods))
		}
		for _, p := range pods {
			ix := p.Annotations[batchv1.JobCompletionIndexAnnotation]
			if out := strings.TrimSpace(c.kubectl(t, "logs", p.Name)); out != "index="+ix {
				t.Errorf("pod %s of index %s logged %q", p.Name, ix, out)
			}
			if p.Spec.Hostname != "indexed-"+ix {
				t.Errorf("pod %s hostname %q", p.Name, p.Spec.Hostname)
			}
		}
	})
	t.Run("failing job stops at its back-off limit", func(t *testing.T) {
		t.Parallel()
		job := c.waitJob(t, "failing", batchv1.JobFailed)
		if cond := jobCondition(job, batchv1.JobFailed); cond.Reason != batchv1.JobReasonBackoffLimitExceeded {
			t.Errorf("Failed condition = %+v", cond)
		}
		if job.Status.Failed != 2 || job.Status.Active != 0 {
			t.Errorf("status = %+v", job.Status)
		}
		if pods := c.jobPods(t, "failing"); len(pods) != 2 {
			t.Errorf("%d pods, want 2 (one try and one retry)", len(pods))
		}
	})
	t.Run("replication controller keeps its replicas", func(t *testing.T) {
		t.Parallel()
		pods := c.runningPods(t, "app=rc-web", 2)
		c.kubectl(t, "delete", "pod", pods[0].Name, "--wait=false")
		harness.Poll(t, 2*time.Minute, "a replacement pod running", func() (bool, string) {
			l, err := c.client.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app=rc-web"})
			if err != nil {
				return false, err.Error()
			}
			running := 0
			var states []string
			for _, p := range l.Items {
				states = append(states, fmt.Sprintf("%s %s deleting=%v", p.Name, p.Status.Phase, p.DeletionTimestamp != nil))
				if p.Name != pods[0].Name && p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
					running++
				}
			}
			return running == 2, strings.Join(states, "; ")
		})
		rc, err := c.client.CoreV1().ReplicationControllers("default").Get(context.Background(), "rc-web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if rc.Status.Replicas != 2 {
			t.Errorf("status = %+v", rc.Status)
		}
	})
}

// waitJob waits for the Job's condition want and returns the Job.
func (c *cluster) waitJob(t *testing.T, name string, want batchv1.JobConditionType) *batchv1.Job {
	t.Helper()
	var job *batchv1.Job
	harness.Poll(t, 3*time.Minute, fmt.Sprintf("job %s %s", name, want), func() (bool, string) {
		j, err := c.client.BatchV1().Jobs("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		job = j
		if jobCondition(j, batchv1.JobComplete) != nil && want != batchv1.JobComplete ||
			jobCondition(j, batchv1.JobFailed) != nil && want != batchv1.JobFailed {
			t.Fatalf("job %s finished otherwise: %+v", name, j.Status)
		}
		return jobCondition(j, want) != nil, fmt.Sprintf("%+v", j.Status)
	})
	return job
}

func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i, cond := range j.Status.Conditions {
		if cond.Type == t && cond.Status == corev1.ConditionTrue {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

func (c *cluster) jobPods(t *testing.T, job string) []corev1.Pod {
	t.Helper()
	l, err := c.client.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=" + job})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// runningPods waits for want running pods of selector.
func (c *cluster) runningPods(t *testing.T, selector string, want int) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	harness.Poll(t, 3*time.Minute, fmt.Sprintf("%d running pods of %s", want, selector), func() (bool, string) {
		l, err := c.client.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err.Error()
		}
		pods = pods[:0]
		var states []string
		for _, p := range l.Items {
			states = append(states, fmt.Sprintf("%s %s", p.Name, p.Status.Phase))
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
				pods = append(pods, p)
			}
		}
		return len(pods) == want && len(l.Items) == want, strings.Join(states, "; ")
	})
	return pods
}
