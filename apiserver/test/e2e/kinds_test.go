package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"strings"
	"testing"
)

// newKindsYAML holds one object of each kind whose server-side table
// columns the tests below check through kubectl: LimitRange, ResourceQuota,
// ReplicationController, PodTemplate, the persistent volume and storage
// kinds, RuntimeClass, StatefulSet, DaemonSet, CronJob, the ingress kinds,
// NetworkPolicy, PodDisruptionBudget and the flowcontrol kinds.
const newKindsYAML = `apiVersion: v1
kind: LimitRange
metadata: {name: lr, namespace: default}
spec:
  limits:
  - type: Container
    max: {cpu: "4"}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: rq, namespace: default}
spec:
  hard: {configmaps: "50", limits.memory: 10Gi}
---
apiVersion: v1
kind: ReplicationController
metadata: {name: rc, namespace: default}
spec:
  replicas: 0
  selector: {app: rc}
  template:
    metadata: {labels: {app: rc}}
    spec:
      containers: [{name: c, image: busybox}]
---
apiVersion: v1
kind: PodTemplate
metadata: {name: pt, namespace: default}
template:
  metadata: {labels: {app: pt}}
  spec:
    containers: [{name: c, image: busybox}]
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /tmp/pv}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: pvc, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: gvisor}
handler: runsc
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: sts, namespace: default}
spec:
  replicas: 0
  serviceName: sts
  selector: {matchLabels: {app: sts}}
  template:
    metadata: {labels: {app: sts}}
    spec:
      containers: [{name: c, image: busybox}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ds, namespace: default}
spec:
  selector: {matchLabels: {app: ds}}
  template:
    metadata: {labels: {app: ds}}
    spec:
      containers: [{name: c, image: busybox}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: cj, namespace: default}
spec:
  schedule: "*/5 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: busybox}]
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx}
spec: {controller: example.com/ingress}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: ing, namespace: default}
spec:
  ingressClassName: nginx
  rules:
  - host: example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: np, namespace: default}
spec:
  podSelector: {matchLabels: {app: web}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: pdb, namespace: default}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: example.com/fast
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: csi.example.com}
spec: {}
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: va}
spec:
  attacher: csi.example.com
  nodeName: node-1
  source: {persistentVolumeName: pv}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {name: plc}
spec:
  type: Limited
  limited:
    limitResponse: {type: Queue, queuing: {}}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {name: fs}
spec:
  priorityLevelConfiguration: {name: plc}
  matchingPrecedence: 500
`

// TestKubectlGetNewKinds checks that kubectl get prints upstream's columns
// (from the server's Table) for every kind of newKindsYAML, and Job.
func TestKubectlGetNewKinds(t *testing.T) {
	k, _ := newKubectl(t)
	k.run("apply", "-f", writeFile(t, "kinds.yaml", newKindsYAML))
	k.run("create", "job", "job1", "--image=busybox")
	all := k.run("get", "all", "-o", "name")
	for _, name := range []string{"replicationcontroller/rc", "statefulset.apps/sts", "daemonset.apps/ds", "cronjob.batch/cj", "job.batch/job1"} {
		if !strings.Contains(all, name+"\n") {
			t.Errorf("kubectl get all lacks %s:\n%s", name, all)
		}
	}
	for _, tc := range []struct {
		resource, header, row string
	}{
		{"limitranges", "NAME,CREATED AT", "lr"},
		{"resourcequotas", "NAME,REQUEST,LIMIT,AGE", "rq,configmaps: 0/50,limits.memory: 0/10Gi"},
		{"replicationcontrollers", "NAME,DESIRED,CURRENT,READY,AGE", "rc,0,0,0"},
		{"podtemplates", "NAME,CONTAINERS,IMAGES,POD LABELS", "pt,c,busybox,app=pt"},
		{"persistentvolumes", "NAME,CAPACITY,ACCESS MODES,RECLAIM POLICY,STATUS,CLAIM,STORAGECLASS,VOLUMEATTRIBUTESCLASS,REASON,AGE", "pv,1Gi,RWO,Retain,Pending"},
		{"persistentvolumeclaims", "NAME,STATUS,VOLUME,CAPACITY,ACCESS MODES,STORAGECLASS,VOLUMEATTRIBUTESCLASS,AGE", "pvc,Pending"},
		{"priorityclasses", "NAME,VALUE,GLOBAL-DEFAULT,AGE,PREEMPTIONPOLICY", "system-cluster-critical,2000000000,false"},
		{"runtimeclasses", "NAME,HANDLER,AGE", "gvisor,runsc"},
		{"statefulsets", "NAME,READY,AGE", "sts,0/0"},
		{"daemonsets", "NAME,DESIRED,CURRENT,READY,UP-TO-DATE,AVAILABLE,NODE SELECTOR,AGE", "ds,0,0,0,0,0,<none>"},
		{"jobs", "NAME,STATUS,COMPLETIONS,DURATION,AGE", "job1,Running,0/1"},
		{"cronjobs", "NAME,SCHEDULE,TIMEZONE,SUSPEND,ACTIVE,LAST SCHEDULE,AGE", "cj,*/5 * * * *,<none>,False,0,<none>"},
		{"ingressclasses", "NAME,CONTROLLER,PARAMETERS,AGE", "nginx,example.com/ingress,<none>"},
		{"ingresses", "NAME,CLASS,HOSTS,ADDRESS,PORTS,AGE", "ing,nginx,example.com,80"},
		{"networkpolicies", "NAME,POD-SELECTOR,AGE", "np,app=web"},
		{"poddisruptionbudgets", "NAME,MIN AVAILABLE,MAX UNAVAILABLE,ALLOWED DISRUPTIONS,AGE", "pdb,1,N/A,0"},
		{"storageclasses", "NAME,PROVISIONER,RECLAIMPOLICY,VOLUMEBINDINGMODE,ALLOWVOLUMEEXPANSION,AGE", "fast,example.com/fast,Delete,Immediate,false"},
		{"csidrivers", "NAME,ATTACHREQUIRED,PODINFOONMOUNT,STORAGECAPACITY,TOKENREQUESTS,REQUIRESREPUBLISH,MODES,AGE", "csi.example.com,true,false,false,<unset>,false,Persistent"},
		{"volumeattachments", "NAME,ATTACHER,PV,NODE,ATTACHED,AGE", "va,csi.example.com,pv,node-1,false"},
		{"flowschemas", "NAME,PRIORITYLEVEL,MATCHINGPRECEDENCE,DISTINGUISHERMETHOD,AGE,MISSINGPL", "fs,plc,500,<none>"},
		{"prioritylevelconfigurations", "NAME,TYPE,NOMINALCONCURRENCYSHARES,QUEUES,HANDSIZE,QUEUELENGTHLIMIT,AGE", "plc,Limited,30,64,8,50"},
	} {
		t.Run(tc.resource, func(t *testing.T) {
			lines := strings.Split(strings.TrimSpace(k.run("get", tc.resource)), "\n")
			if got := strings.Join(columns(lines[0]), ","); got != tc.header {
				t.Errorf("header:\n got %s\nwant %s", got, tc.header)
			}
			want := strings.Split(tc.row, ",")
			for _, line := range lines[1:] {
				cells := columns(line)
				if cells[0] != want[0] {
					continue
				}
				if len(cells) < len(want) || strings.Join(cells[:len(want)], ",") != tc.row {
					t.Errorf("row:\n got %q\nwant prefix %q", strings.Join(cells, ","), tc.row)
				}
				return
			}
			t.Errorf("no row for %s in\n%s", want[0], strings.Join(lines, "\n"))
		})
	}
}

// TestKubectlDiscoveryAndExplainNewKinds: the groups of those kinds are in
// discovery and their OpenAPI schemas are served.
func TestKubectlDiscoveryAndExplainNewKinds(t *testing.T) {
	k, _ := newKubectl(t)
	out := k.run("api-resources", "--api-group=batch", "-o", "name")
	if strings.Join(strings.Fields(out), ",") != "cronjobs.batch,jobs.batch" {
		t.Errorf("api-resources batch: %q", out)
	}
	out = k.run("api-resources", "--api-group=", "-o", "name")
	for _, r := range []string{"limitranges", "resourcequotas", "replicationcontrollers", "podtemplates", "persistentvolumes", "persistentvolumeclaims"} {
		if !strings.Contains("\n"+out, "\n"+r+"\n") {
			t.Errorf("api-resources core lacks %s:\n%s", r, out)
		}
	}
	for _, field := range []string{"cronjob.spec.schedule", "priorityclass.value", "poddisruptionbudget.spec.minAvailable",
		"certificatesigningrequest.spec.signerName", "runtimeclass.overhead", "flowschema.spec.matchingPrecedence"} {
		if out, err := k.try("explain", field); err != nil || !strings.Contains(out, "FIELD:") {
			t.Errorf("explain %s: %v\n%s", field, err, out)
		}
	}
}

func TestKubectlCreatePriorityClassAndQuota(t *testing.T) {
	k, _ := newKubectl(t)
	if out := k.run("create", "priorityclass", "high", "--value=1000", "--description=important"); strings.TrimSpace(out) != "priorityclass.scheduling.k8s.io/high created" {
		t.Errorf("create priorityclass: %q", out)
	}
	if out, err := k.try("create", "priorityclass", "system-mine", "--value=5"); err == nil || !strings.Contains(out, "reserved for system use only") {
		t.Errorf("system- prefix: %v %q", err, out)
	}
	k.run("create", "quota", "q", "--hard=pods=1")
	k.run("run", "p1", "--image=busybox", `--overrides={"spec":{"priorityClassName":"high"}}`)
	out, err := k.try("run", "p2", "--image=busybox")
	want := `Error from server (Forbidden): pods "p2" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1`
	if err == nil || strings.TrimSpace(out) != want {
		t.Errorf("quota exceeded:\n got %v %q\nwant %q", err, out, want)
	}
	if got := strings.TrimSpace(k.run("get", "pod", "p1", "-o", "jsonpath={.spec.priority}")); got != "1000" {
		t.Errorf("priority of p1 = %q", got)
	}
	lines := strings.Split(strings.TrimSpace(k.run("get", "quota", "q")), "\n")
	if got := columns(lines[1]); len(got) < 2 || got[1] != "pods: 1/1" {
		t.Errorf("get quota: %q", lines[1])
	}
}

const dryRunYAML = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: default
data:
  mode: "%s"
`

func TestKubectlServerDryRunAndDiff(t *testing.T) {
	k, _ := newKubectl(t)
	first := writeFile(t, "a.yaml", strings.Replace(dryRunYAML, "%s", "one", 1))
	if out := k.run("apply", "--dry-run=server", "-f", first); strings.TrimSpace(out) != "configmap/settings created (server dry run)" {
		t.Errorf("dry-run apply: %q", out)
	}
	if out, err := k.try("get", "configmap", "settings"); err == nil {
		t.Fatalf("a server dry run stored the object: %s", out)
	}
	k.run("apply", "-f", first)
	// kubectl diff exits 0 when nothing would change, 1 when something would.
	if out, err := k.try("diff", "-f", first); err != nil {
		t.Errorf("diff of an unchanged object: %v %s", err, out)
	}
	second := writeFile(t, "b.yaml", strings.Replace(dryRunYAML, "%s", "two", 1))
	out, err := k.try("diff", "-f", second)
	if err == nil || !strings.Contains(out, "-  mode: one") || !strings.Contains(out, "+  mode: two") {
		t.Errorf("diff of a change: %v\n%s", err, out)
	}
	if out := k.run("apply", "--dry-run=server", "-f", second); strings.TrimSpace(out) != "configmap/settings configured (server dry run)" {
		t.Errorf("dry-run apply of a change: %q", out)
	}
	if got := k.run("get", "configmap", "settings", "-o", "jsonpath={.data.mode}"); got != "one" {
		t.Errorf("after dry runs the data is %q, want one", got)
	}
}

func TestKubectlCertificateApprove(t *testing.T) {
	k, _ := newKubectl(t)
	csr := `apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: tester}
spec:
  signerName: kubernetes.io/kube-apiserver-client
  usages: [client auth]
  request: ` + csrBase64(t) + "\n"
	k.run("create", "-f", writeFile(t, "csr.yaml", csr))
	lines := strings.Split(strings.TrimSpace(k.run("get", "csr")), "\n")
	if got := strings.Join(columns(lines[0]), ","); got != "NAME,AGE,SIGNERNAME,REQUESTOR,REQUESTEDDURATION,CONDITION" {
		t.Errorf("get csr header: %q", got)
	}
	if out := k.run("certificate", "approve", "tester"); strings.TrimSpace(out) != "certificatesigningrequest.certificates.k8s.io/tester approved" {
		t.Errorf("approve: %q", out)
	}
	lines = strings.Split(strings.TrimSpace(k.run("get", "csr", "tester")), "\n")
	if cells := columns(lines[1]); cells[len(cells)-1] != "Approved" {
		t.Errorf("condition after approve: %q", lines[1])
	}
}

func csrBase64(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "tester"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}
