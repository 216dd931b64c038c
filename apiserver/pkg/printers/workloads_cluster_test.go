package printers

import (
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func TestPrintWorkloadAndClusterKinds(t *testing.T) {
	created := ago(2 * time.Hour)
	om := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, CreationTimestamp: created} }
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	tests := []struct {
		name    string
		obj     runtime.Object
		columns []string
		want    []interface{}
	}{
		{"resourcequota", &corev1.ResourceQuota{ObjectMeta: om("q"), Status: corev1.ResourceQuotaStatus{
			Hard: corev1.ResourceList{"pods": resource.MustParse("10"), "limits.cpu": resource.MustParse("2"), "requests.memory": resource.MustParse("1Gi")},
			Used: corev1.ResourceList{"pods": resource.MustParse("3"), "limits.cpu": resource.MustParse("500m")}}},
			[]string{"Name", "Request", "Limit", "Age"},
			[]interface{}{"q", "pods: 3/10, requests.memory: 0/1Gi", "limits.cpu: 500m/2", "120m"}},
		{"replicationcontroller", &corev1.ReplicationController{ObjectMeta: om("rc"),
			Spec:   corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](3), Selector: map[string]string{"app": "web"}, Template: &tmpl},
			Status: corev1.ReplicationControllerStatus{Replicas: 2, ReadyReplicas: 1}},
			[]string{"Name", "Desired", "Current", "Ready", "Age", "Containers", "Images", "Selector"},
			[]interface{}{"rc", int64(3), int64(2), int64(1), "120m", "app", "nginx", "app=web"}},
		{"podtemplate", &corev1.PodTemplate{ObjectMeta: om("pt"), Template: tmpl},
			[]string{"Name", "Containers", "Images", "Pod Labels"},
			[]interface{}{"pt", "app", "nginx", "app=web"}},
		{"persistentvolume", &corev1.PersistentVolume{ObjectMeta: om("pv"), Spec: corev1.PersistentVolumeSpec{
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")},
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany, corev1.ReadWriteOnce}, StorageClassName: "fast",
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete, ClaimRef: &corev1.ObjectReference{Namespace: "ns", Name: "data"},
			VolumeMode: ptr.To(corev1.PersistentVolumeFilesystem)}, Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound}},
			[]string{"Name", "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim", "StorageClass", "VolumeAttributesClass", "Reason", "Age", "VolumeMode"},
			[]interface{}{"pv", "5Gi", "RWO,RWX", "Delete", "Bound", "ns/data", "fast", "<unset>", "", "120m", "Filesystem"}},
		{"persistentvolumeclaim bound", &corev1.PersistentVolumeClaim{ObjectMeta: om("data"), Spec: corev1.PersistentVolumeClaimSpec{
			VolumeName: "pv", StorageClassName: ptr.To("fast")}, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound,
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")}}},
			[]string{"Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass", "VolumeAttributesClass", "Age", "VolumeMode"},
			[]interface{}{"data", "Bound", "pv", "5Gi", "RWO", "fast", "<unset>", "120m", "<unset>"}},
		{"statefulset", &appsv1.StatefulSet{ObjectMeta: om("db"), Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), Template: tmpl},
			Status: appsv1.StatefulSetStatus{ReadyReplicas: 2}},
			[]string{"Name", "Ready", "Age", "Containers", "Images"},
			[]interface{}{"db", "2/3", "120m", "app", "nginx"}},
		{"daemonset", &appsv1.DaemonSet{ObjectMeta: om("ds"), Spec: appsv1.DaemonSetSpec{Selector: sel, Template: tmpl},
			Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, NumberReady: 2, UpdatedNumberScheduled: 3, NumberAvailable: 2}},
			[]string{"Name", "Desired", "Current", "Ready", "Up-to-date", "Available", "Node Selector", "Age", "Containers", "Images", "Selector"},
			[]interface{}{"ds", int64(3), int64(3), int64(2), int64(3), int64(2), "<none>", "120m", "app", "nginx", "app=web"}},
		{"controllerrevision", &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "db-7f", CreationTimestamp: created,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", Controller: ptr.To(true)}}}, Revision: 2},
			[]string{"Name", "Controller", "Revision", "Age"},
			[]interface{}{"db-7f", "statefulset.apps/db", int64(2), "120m"}},
		{"job complete", &batchv1.Job{ObjectMeta: om("j"), Spec: batchv1.JobSpec{Completions: ptr.To[int32](3), Selector: sel, Template: tmpl},
			Status: batchv1.JobStatus{Succeeded: 3, StartTime: agoPtr(time.Hour), CompletionTime: agoPtr(50 * time.Minute),
				Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}}},
			[]string{"Name", "Status", "Completions", "Duration", "Age", "Containers", "Images", "Selector"},
			[]interface{}{"j", "Complete", "3/3", "10m", "120m", "app", "nginx", "app=web"}},
		{"cronjob", &batchv1.CronJob{ObjectMeta: om("cj"), Spec: batchv1.CronJobSpec{Schedule: "@hourly", Suspend: ptr.To(false)},
			Status: batchv1.CronJobStatus{LastScheduleTime: agoPtr(5 * time.Minute)}},
			[]string{"Name", "Schedule", "Timezone", "Suspend", "Active", "Last Schedule", "Age", "Containers", "Images", "Selector"},
			[]interface{}{"cj", "@hourly", "<none>", "False", int64(0), "5m", "120m", "", "", "<none>"}},
		{"pdb", &policyv1.PodDisruptionBudget{ObjectMeta: om("pdb"), Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromString("25%"))},
			Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1}},
			[]string{"Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"},
			[]interface{}{"pdb", "N/A", "25%", int64(1), "120m"}},
		{"priorityclass", &schedulingv1.PriorityClass{ObjectMeta: om("high"), Value: 1000, PreemptionPolicy: ptr.To(corev1.PreemptNever)},
			[]string{"Name", "Value", "Global-Default", "Age", "PreemptionPolicy"},
			[]interface{}{"high", int64(1000), false, "120m", "Never"}},
		{"runtimeclass", &nodev1.RuntimeClass{ObjectMeta: om("gvisor"), Handler: "runsc"},
			[]string{"Name", "Handler", "Age"}, []interface{}{"gvisor", "runsc", "120m"}},
		{"ingress", &networkingv1.Ingress{ObjectMeta: om("ing"), Spec: networkingv1.IngressSpec{
			Rules: []networkingv1.IngressRule{{Host: "a.example"}, {Host: "b.example"}}, TLS: []networkingv1.IngressTLS{{}}},
			Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "10.0.0.9"}}}}},
			[]string{"Name", "Class", "Hosts", "Address", "Ports", "Age"},
			[]interface{}{"ing", "<none>", "a.example,b.example", "10.0.0.9", "80, 443", "120m"}},
		{"ingressclass", &networkingv1.IngressClass{ObjectMeta: om("nginx"), Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx",
			Parameters: &networkingv1.IngressClassParametersReference{APIGroup: ptr.To("k8s.example.com"), Kind: "Params", Name: "p"}}},
			[]string{"Name", "Controller", "Parameters", "Age"},
			[]interface{}{"nginx", "k8s.io/ingress-nginx", "Params.k8s.example.com/p", "120m"}},
		{"networkpolicy", &networkingv1.NetworkPolicy{ObjectMeta: om("np")},
			[]string{"Name", "Pod-Selector", "Age"}, []interface{}{"np", "<none>", "120m"}},
		{"storageclass default", &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "std", CreationTimestamp: created,
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}}, Provisioner: "example.com/p"},
			[]string{"Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode", "AllowVolumeExpansion", "Age"},
			[]interface{}{"std (default)", "example.com/p", "Delete", "Immediate", false, "120m"}},
		{"csidriver", &storagev1.CSIDriver{ObjectMeta: om("csi.example.com")},
			[]string{"Name", "AttachRequired", "PodInfoOnMount", "StorageCapacity", "TokenRequests", "RequiresRepublish", "Modes", "Age"},
			[]interface{}{"csi.example.com", true, false, false, "<unset>", false, "<none>", "120m"}},
		{"csinode", &storagev1.CSINode{ObjectMeta: om("n1"), Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "a"}}}},
			[]string{"Name", "Drivers", "Age"}, []interface{}{"n1", int64(1), "120m"}},
		{"csistoragecapacity", &storagev1.CSIStorageCapacity{ObjectMeta: om("cap"), StorageClassName: "fast"},
			[]string{"Name", "StorageClassName", "Capacity"}, []interface{}{"cap", "fast", "<unset>"}},
		{"volumeattachment", &storagev1.VolumeAttachment{ObjectMeta: om("va"), Spec: storagev1.VolumeAttachmentSpec{Attacher: "csi", NodeName: "n1",
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("pv")}}, Status: storagev1.VolumeAttachmentStatus{Attached: true}},
			[]string{"Name", "Attacher", "PV", "Node", "Attached", "Age"}, []interface{}{"va", "csi", "pv", "n1", true, "120m"}},
		{"csr", &certificatesv1.CertificateSigningRequest{ObjectMeta: om("csr"), Spec: certificatesv1.CertificateSigningRequestSpec{
			SignerName: "kubernetes.io/kubelet-serving", Username: "system:node:n1", ExpirationSeconds: ptr.To[int32](3600)},
			Status: certificatesv1.CertificateSigningRequestStatus{Certificate: []byte("x"),
				Conditions: []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved}}}},
			[]string{"Name", "Age", "SignerName", "Requestor", "RequestedDuration", "Condition"},
			[]interface{}{"csr", "120m", "kubernetes.io/kubelet-serving", "system:node:n1", "60m", "Approved,Issued"}},
		{"flowschema", &flowcontrolv1.FlowSchema{ObjectMeta: om("fs"), Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "workload"}, MatchingPrecedence: 800,
			DistinguisherMethod: &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType}}},
			[]string{"Name", "PriorityLevel", "MatchingPrecedence", "DistinguisherMethod", "Age", "MissingPL"},
			[]interface{}{"fs", "workload", int64(800), "ByUser", "120m", "?"}},
		{"prioritylevel exempt", &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: om("exempt"), Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementExempt}},
			[]string{"Name", "Type", "NominalConcurrencyShares", "Queues", "HandSize", "QueueLengthLimit", "Age"},
			[]interface{}{"exempt", "Exempt", "<none>", "<none>", "<none>", "<none>", "120m"}},
		{"events.k8s.io event", &eventsv1.Event{ObjectMeta: om("e"), Reason: "Pulled", Note: " pulled ", Type: "Normal",
			Regarding: corev1.ObjectReference{Kind: "Pod", Name: "web"}, DeprecatedFirstTimestamp: ago(time.Hour), DeprecatedLastTimestamp: ago(time.Minute),
			DeprecatedCount: 4, DeprecatedSource: corev1.EventSource{Component: "kubelet", Host: "n1"}},
			[]string{"Last Seen", "Type", "Reason", "Object", "Subobject", "Source", "Message", "First Seen", "Count", "Name"},
			[]interface{}{"60s", "Normal", "Pulled", "pod/web", "", "kubelet, n1", "pulled", "60m", int64(4), "e"}},
	}
	p := newTestPrinter()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			table, err := p.Table(tc.obj, false)
			if err != nil {
				t.Fatal(err)
			}
			var cols []string
			for _, c := range table.ColumnDefinitions {
				cols = append(cols, c.Name)
			}
			if !reflect.DeepEqual(cols, tc.columns) {
				t.Errorf("columns:\n got %v\nwant %v", cols, tc.columns)
			}
			if len(table.Rows) != 1 || !reflect.DeepEqual(table.Rows[0].Cells, tc.want) {
				t.Errorf("cells:\n got %#v\nwant %#v", table.Rows[0].Cells, tc.want)
			}
			if table.Rows[0].Object.Object != tc.obj {
				t.Errorf("row object is not the printed object")
			}
		})
	}
}

func TestLimitRangePrintsDefaultTable(t *testing.T) {
	table, err := newTestPrinter().Table(&corev1.LimitRangeList{Items: []corev1.LimitRange{{ObjectMeta: metav1.ObjectMeta{
		Name: "lr", CreationTimestamp: metav1.NewTime(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC))}}}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(table.ColumnDefinitions) != 2 || table.ColumnDefinitions[1].Name != "Created At" ||
		!reflect.DeepEqual(table.Rows[0].Cells, []interface{}{"lr", "2024-01-02T03:04:05Z"}) {
		t.Errorf("table = %+v", table)
	}
}
