package defaults

import (
	"encoding/json"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// jsonEqual compares got, marshalled to JSON, with the JSON text want.
func jsonEqual(t *testing.T, got interface{}, want string) {
	t.Helper()
	gotBytes, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var g, w interface{}
	if err := json.Unmarshal(gotBytes, &g); err != nil {
		t.Fatalf("unmarshal got: %v", err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("unmarshal want: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("defaulted object differs\n got: %s\nwant: %s", gotBytes, want)
	}
}

// TestReplicaSetSeed replays seed 003: the request body kubectl sent, and the
// spec kube-apiserver v1.30 answered with.
func TestReplicaSetSeed(t *testing.T) {
	const request = `{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"my-replicaset","namespace":"default"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"my-app"}},"template":{"metadata":{"labels":{"app":"my-app"}},"spec":{"containers":[{"image":"nginx","name":"my-container","ports":[{"containerPort":80}]}]}}}}`
	const wantSpec = `{"replicas":2,"selector":{"matchLabels":{"app":"my-app"}},"template":{"metadata":{"creationTimestamp":null,"labels":{"app":"my-app"}},"spec":{"containers":[{"name":"my-container","image":"nginx","ports":[{"containerPort":80,"protocol":"TCP"}],"resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"Always"}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","securityContext":{},"schedulerName":"default-scheduler"}}}`

	rs := &appsv1.ReplicaSet{}
	if err := json.Unmarshal([]byte(request), rs); err != nil {
		t.Fatal(err)
	}
	DefaultReplicaSet(rs)
	jsonEqual(t, rs.Spec, wantSpec)
}

func TestReplicaSetReplicasDefault(t *testing.T) {
	rs := &appsv1.ReplicaSet{}
	DefaultReplicaSet(rs)
	if rs.Spec.Replicas == nil || *rs.Spec.Replicas != 1 {
		t.Errorf("replicas = %v, want 1", rs.Spec.Replicas)
	}
	three := int32(3)
	rs = &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Replicas: &three}}
	DefaultReplicaSet(rs)
	if *rs.Spec.Replicas != 3 {
		t.Errorf("replicas = %d, want 3 kept", *rs.Spec.Replicas)
	}
}

func TestDeploymentDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{
			name: "empty spec",
			in:   `{"spec":{"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"nginx:1.27"}]}}}}`,
			want: `{"replicas":1,"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"creationTimestamp":null,"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"nginx:1.27","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","securityContext":{},"schedulerName":"default-scheduler"}},"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":"25%"}},"revisionHistoryLimit":10,"progressDeadlineSeconds":600}`,
		},
		{
			name: "recreate keeps no rolling update",
			in:   `{"spec":{"replicas":0,"strategy":{"type":"Recreate"},"revisionHistoryLimit":0,"progressDeadlineSeconds":30,"template":{"spec":{"containers":[]}}}}`,
			want: `{"replicas":0,"selector":null,"template":{"metadata":{"creationTimestamp":null},"spec":{"containers":[],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","securityContext":{},"schedulerName":"default-scheduler"}},"strategy":{"type":"Recreate"},"revisionHistoryLimit":0,"progressDeadlineSeconds":30}`,
		},
		{
			name: "partial rolling update",
			in:   `{"spec":{"strategy":{"rollingUpdate":{"maxSurge":1}},"template":{"spec":{"containers":[]}}}}`,
			want: `{"replicas":1,"selector":null,"template":{"metadata":{"creationTimestamp":null},"spec":{"containers":[],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","securityContext":{},"schedulerName":"default-scheduler"}},"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":1}},"revisionHistoryLimit":10,"progressDeadlineSeconds":600}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := &appsv1.Deployment{}
			if err := json.Unmarshal([]byte(tc.in), d); err != nil {
				t.Fatal(err)
			}
			DefaultDeployment(d)
			jsonEqual(t, d.Spec, tc.want)
		})
	}
}

func TestServiceDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{
			name: "cluster ip",
			in:   `{"spec":{"selector":{"app":"x"},"ports":[{"port":80},{"name":"b","port":81,"targetPort":"http","protocol":"UDP"}]}}`,
			want: `{"ports":[{"protocol":"TCP","port":80,"targetPort":80},{"name":"b","protocol":"UDP","port":81,"targetPort":"http"}],"selector":{"app":"x"},"type":"ClusterIP","sessionAffinity":"None","internalTrafficPolicy":"Cluster"}`,
		},
		{
			name: "node port",
			in:   `{"spec":{"type":"NodePort","ports":[{"port":80,"targetPort":8080}]}}`,
			want: `{"ports":[{"protocol":"TCP","port":80,"targetPort":8080}],"type":"NodePort","sessionAffinity":"None","externalTrafficPolicy":"Cluster","internalTrafficPolicy":"Cluster"}`,
		},
		{
			name: "load balancer",
			in:   `{"spec":{"type":"LoadBalancer","ports":[{"port":443}],"externalTrafficPolicy":"Local"}}`,
			want: `{"ports":[{"protocol":"TCP","port":443,"targetPort":443}],"type":"LoadBalancer","sessionAffinity":"None","externalTrafficPolicy":"Local","internalTrafficPolicy":"Cluster","allocateLoadBalancerNodePorts":true}`,
		},
		{
			name: "cluster ip with external ips",
			in:   `{"spec":{"ports":[{"port":80}],"externalIPs":["1.2.3.4"]}}`,
			want: `{"ports":[{"protocol":"TCP","port":80,"targetPort":80}],"externalIPs":["1.2.3.4"],"type":"ClusterIP","sessionAffinity":"None","externalTrafficPolicy":"Cluster","internalTrafficPolicy":"Cluster"}`,
		},
		{
			name: "external name",
			in:   `{"spec":{"type":"ExternalName","externalName":"example.com"}}`,
			want: `{"type":"ExternalName","externalName":"example.com","sessionAffinity":"None"}`,
		},
		{
			name: "client ip affinity",
			in:   `{"spec":{"ports":[{"port":80}],"sessionAffinity":"ClientIP"}}`,
			want: `{"ports":[{"protocol":"TCP","port":80,"targetPort":80}],"type":"ClusterIP","sessionAffinity":"ClientIP","sessionAffinityConfig":{"clientIP":{"timeoutSeconds":10800}},"internalTrafficPolicy":"Cluster"}`,
		},
		{
			name: "none affinity drops config",
			in:   `{"spec":{"ports":[{"port":80}],"sessionAffinityConfig":{"clientIP":{"timeoutSeconds":5}}}}`,
			want: `{"ports":[{"protocol":"TCP","port":80,"targetPort":80}],"type":"ClusterIP","sessionAffinity":"None","internalTrafficPolicy":"Cluster"}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := &corev1.Service{}
			if err := json.Unmarshal([]byte(tc.in), svc); err != nil {
				t.Fatal(err)
			}
			DefaultService(svc)
			jsonEqual(t, svc.Spec, tc.want)
		})
	}
}

func TestServiceLoadBalancerIPMode(t *testing.T) {
	svc := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer}}
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "1.2.3.4"}, {Hostname: "lb.example.com"}}
	DefaultService(svc)
	if m := svc.Status.LoadBalancer.Ingress[0].IPMode; m == nil || *m != corev1.LoadBalancerIPModeVIP {
		t.Errorf("ipMode = %v, want VIP", m)
	}
	if svc.Status.LoadBalancer.Ingress[1].IPMode != nil {
		t.Errorf("ipMode set for a hostname ingress")
	}
}

func TestImagePullPolicy(t *testing.T) {
	tests := []struct {
		image string
		want  corev1.PullPolicy
	}{
		{"nginx", corev1.PullAlways},
		{"nginx:latest", corev1.PullAlways},
		{"nginx:1.27", corev1.PullIfNotPresent},
		{"docker.io/library/nginx", corev1.PullAlways},
		{"localhost:5000/app", corev1.PullAlways},
		{"localhost:5000/app:v1", corev1.PullIfNotPresent},
		{"registry.example.com:443/team/app:latest", corev1.PullAlways},
		{"nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", corev1.PullIfNotPresent},
		{"nginx:latest@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", corev1.PullAlways},
		{"Nginx", corev1.PullIfNotPresent},
		{"", corev1.PullIfNotPresent},
		{"not a valid image", corev1.PullIfNotPresent},
	}
	for _, tc := range tests {
		t.Run(tc.image, func(t *testing.T) {
			c := corev1.Container{Image: tc.image}
			defaultContainer(&c)
			if c.ImagePullPolicy != tc.want {
				t.Errorf("imagePullPolicy = %q, want %q", c.ImagePullPolicy, tc.want)
			}
		})
	}
	c := corev1.Container{Image: "nginx", ImagePullPolicy: corev1.PullNever}
	defaultContainer(&c)
	if c.ImagePullPolicy != corev1.PullNever {
		t.Errorf("explicit pull policy overwritten: %q", c.ImagePullPolicy)
	}
}

func TestPodDefaults(t *testing.T) {
	const in = `{
	  "metadata":{"name":"p","namespace":"default"},
	  "spec":{
	    "serviceAccount":"builder",
	    "hostNetwork":true,
	    "volumes":[
	      {"name":"empty"},
	      {"name":"s","secret":{"secretName":"s"}},
	      {"name":"cm","configMap":{"name":"cm"}},
	      {"name":"hp","hostPath":{"path":"/data"}},
	      {"name":"dapi","downwardAPI":{"items":[{"path":"name","fieldRef":{"fieldPath":"metadata.name"}}]}},
	      {"name":"proj","projected":{"sources":[{"serviceAccountToken":{"path":"token"}}]}}
	    ],
	    "containers":[{
	      "name":"c","image":"app:v1",
	      "ports":[{"containerPort":8080}],
	      "env":[{"name":"NODE","valueFrom":{"fieldRef":{"fieldPath":"spec.nodeName"}}}],
	      "resources":{"limits":{"cpu":"500m","memory":"128Mi"},"requests":{"cpu":"100m"}},
	      "livenessProbe":{"httpGet":{"port":8080}},
	      "readinessProbe":{"grpc":{"port":9090}},
	      "lifecycle":{"preStop":{"httpGet":{"port":8080,"path":"/stop"}}}
	    }],
	    "initContainers":[{"name":"i","image":"busybox","resources":{"limits":{"cpu":"1"}}}]
	  }
	}`
	const wantSpec = `{
	  "volumes":[
	    {"name":"empty","emptyDir":{}},
	    {"name":"s","secret":{"secretName":"s","defaultMode":420}},
	    {"name":"cm","configMap":{"name":"cm","defaultMode":420}},
	    {"name":"hp","hostPath":{"path":"/data","type":""}},
	    {"name":"dapi","downwardAPI":{"items":[{"path":"name","fieldRef":{"apiVersion":"v1","fieldPath":"metadata.name"}}],"defaultMode":420}},
	    {"name":"proj","projected":{"sources":[{"serviceAccountToken":{"expirationSeconds":3600,"path":"token"}}],"defaultMode":420}}
	  ],
	  "initContainers":[{"name":"i","image":"busybox","resources":{"limits":{"cpu":"1"},"requests":{"cpu":"1"}},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"Always"}],
	  "containers":[{
	    "name":"c","image":"app:v1",
	    "ports":[{"hostPort":8080,"containerPort":8080,"protocol":"TCP"}],
	    "env":[{"name":"NODE","valueFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"spec.nodeName"}}}],
	    "resources":{"limits":{"cpu":"500m","memory":"128Mi"},"requests":{"cpu":"100m","memory":"128Mi"}},
	    "livenessProbe":{"httpGet":{"path":"/","port":8080,"scheme":"HTTP"},"timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,"failureThreshold":3},
	    "readinessProbe":{"grpc":{"port":9090,"service":""},"timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,"failureThreshold":3},
	    "lifecycle":{"preStop":{"httpGet":{"path":"/stop","port":8080,"scheme":"HTTP"}}},
	    "terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"
	  }],
	  "restartPolicy":"Always",
	  "terminationGracePeriodSeconds":30,
	  "dnsPolicy":"ClusterFirst",
	  "serviceAccountName":"builder",
	  "serviceAccount":"builder",
	  "hostNetwork":true,
	  "securityContext":{},
	  "schedulerName":"default-scheduler",
	  "enableServiceLinks":true
	}`
	pod := &corev1.Pod{}
	if err := json.Unmarshal([]byte(in), pod); err != nil {
		t.Fatal(err)
	}
	DefaultPod(pod)
	jsonEqual(t, pod.Spec, wantSpec)
}

func TestPodTemplateGetsNoPodOnlyDefaults(t *testing.T) {
	rs := &appsv1.ReplicaSet{}
	rs.Spec.Template.Spec.HostNetwork = true
	rs.Spec.Template.Spec.Containers = []corev1.Container{{
		Name: "c", Image: "x",
		Ports:     []corev1.ContainerPort{{ContainerPort: 80}},
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
	}}
	DefaultReplicaSet(rs)
	spec := rs.Spec.Template.Spec
	if spec.EnableServiceLinks != nil {
		t.Errorf("enableServiceLinks defaulted in a template")
	}
	if spec.Containers[0].Resources.Requests != nil {
		t.Errorf("requests defaulted from limits in a template")
	}
	if spec.Containers[0].Ports[0].HostPort != 0 {
		t.Errorf("hostPort defaulted in a template")
	}
}

func TestResourceRounding(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100.1m")}},
	}}}}
	DefaultPod(pod)
	got := pod.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU]
	if got.String() != "101m" {
		t.Errorf("cpu limit = %s, want 101m", got.String())
	}
}

func TestPodStatusNormalization(t *testing.T) {
	pod := &corev1.Pod{Status: corev1.PodStatus{PodIP: "10.0.0.1", HostIP: "192.168.0.1"}}
	DefaultPod(pod)
	if len(pod.Status.PodIPs) != 1 || pod.Status.PodIPs[0].IP != "10.0.0.1" {
		t.Errorf("podIPs = %v", pod.Status.PodIPs)
	}
	if len(pod.Status.HostIPs) != 1 || pod.Status.HostIPs[0].IP != "192.168.0.1" {
		t.Errorf("hostIPs = %v", pod.Status.HostIPs)
	}
	pod = &corev1.Pod{Status: corev1.PodStatus{PodIPs: []corev1.PodIP{{IP: "10.0.0.2"}, {IP: "fd00::2"}}}}
	DefaultPod(pod)
	if pod.Status.PodIP != "10.0.0.2" || len(pod.Status.PodIPs) != 2 {
		t.Errorf("podIP = %q, podIPs = %v", pod.Status.PodIP, pod.Status.PodIPs)
	}
}

func TestNamespaceDefaults(t *testing.T) {
	ns := &corev1.Namespace{}
	ns.Name = "team-a"
	DefaultNamespace(ns)
	if ns.Status.Phase != corev1.NamespaceActive {
		t.Errorf("phase = %q", ns.Status.Phase)
	}
	if ns.Labels[corev1.LabelMetadataName] != "team-a" {
		t.Errorf("labels = %v", ns.Labels)
	}
	nameless := &corev1.Namespace{}
	DefaultNamespace(nameless)
	if nameless.Labels != nil {
		t.Errorf("label set on a nameless namespace: %v", nameless.Labels)
	}
}

func TestSecretDefaults(t *testing.T) {
	s := &corev1.Secret{
		Data:       map[string][]byte{"a": []byte("1"), "b": []byte("2")},
		StringData: map[string]string{"b": "two", "c": "three"},
	}
	DefaultSecret(s)
	if s.Type != corev1.SecretTypeOpaque {
		t.Errorf("type = %q", s.Type)
	}
	want := map[string][]byte{"a": []byte("1"), "b": []byte("two"), "c": []byte("three")}
	if !reflect.DeepEqual(s.Data, want) || s.StringData != nil {
		t.Errorf("data = %q, stringData = %v", s.Data, s.StringData)
	}
	tls := &corev1.Secret{Type: corev1.SecretTypeTLS}
	DefaultSecret(tls)
	if tls.Type != corev1.SecretTypeTLS {
		t.Errorf("explicit type overwritten: %q", tls.Type)
	}
}

func TestNodeDefaults(t *testing.T) {
	node := &corev1.Node{
		Spec:   corev1.NodeSpec{PodCIDR: "10.244.0.0/24"},
		Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110")}},
	}
	DefaultNode(node)
	if q := node.Status.Allocatable[corev1.ResourcePods]; q.Value() != 110 {
		t.Errorf("allocatable pods = %s", q.String())
	}
	if !reflect.DeepEqual(node.Spec.PodCIDRs, []string{"10.244.0.0/24"}) {
		t.Errorf("podCIDRs = %v", node.Spec.PodCIDRs)
	}
}

func TestEndpointsAndSliceDefaults(t *testing.T) {
	ep := &corev1.Endpoints{Subsets: []corev1.EndpointSubset{{Ports: []corev1.EndpointPort{{Port: 80}, {Port: 53, Protocol: corev1.ProtocolUDP}}}}}
	DefaultEndpoints(ep)
	if ep.Subsets[0].Ports[0].Protocol != corev1.ProtocolTCP || ep.Subsets[0].Ports[1].Protocol != corev1.ProtocolUDP {
		t.Errorf("endpoints ports = %v", ep.Subsets[0].Ports)
	}
	es := &discoveryv1.EndpointSlice{Ports: []discoveryv1.EndpointPort{{}}}
	DefaultEndpointSlice(es)
	if es.Ports[0].Name == nil || *es.Ports[0].Name != "" || es.Ports[0].Protocol == nil || *es.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("slice port = %+v", es.Ports[0])
	}
}

func TestRBACDefaults(t *testing.T) {
	rb := &rbacv1.RoleBinding{
		RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "r"},
		Subjects: []rbacv1.Subject{
			{Kind: rbacv1.UserKind, Name: "alice"},
			{Kind: rbacv1.GroupKind, Name: "devs"},
			{Kind: rbacv1.ServiceAccountKind, Name: "sa", Namespace: "default"},
			{Kind: "Other", Name: "x"},
		},
	}
	DefaultRoleBinding(rb)
	if rb.RoleRef.APIGroup != rbacv1.GroupName {
		t.Errorf("roleRef.apiGroup = %q", rb.RoleRef.APIGroup)
	}
	want := []string{rbacv1.GroupName, rbacv1.GroupName, "", ""}
	for i, s := range rb.Subjects {
		if s.APIGroup != want[i] {
			t.Errorf("subjects[%d].apiGroup = %q, want %q", i, s.APIGroup, want[i])
		}
	}
	crb := &rbacv1.ClusterRoleBinding{Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "bob"}}}
	DefaultClusterRoleBinding(crb)
	if crb.RoleRef.APIGroup != rbacv1.GroupName || crb.Subjects[0].APIGroup != rbacv1.GroupName {
		t.Errorf("cluster role binding = %+v", crb)
	}
}

func TestIdempotent(t *testing.T) {
	d := &appsv1.Deployment{}
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "nginx", LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}}}}}
	DefaultDeployment(d)
	once := d.DeepCopy()
	DefaultDeployment(d)
	if !reflect.DeepEqual(once, d) {
		t.Errorf("second Default changed the object")
	}
}

// Nested optional pointers that are nil do not panic, and legacy volume
// sources get their defaults.
func TestNestedNilPointers(t *testing.T) {
	// Nested optional pointers that are nil.
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		Containers:          []corev1.Container{{Lifecycle: &corev1.Lifecycle{}}},
		EphemeralContainers: []corev1.EphemeralContainer{{}},
		Volumes: []corev1.Volume{
			{VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}},
			{VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{}}}}},
			{VolumeSource: corev1.VolumeSource{AzureDisk: &corev1.AzureDiskVolumeSource{}}},
			{VolumeSource: corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{}}},
			{VolumeSource: corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{}}},
			{VolumeSource: corev1.VolumeSource{ScaleIO: &corev1.ScaleIOVolumeSource{}}},
		},
	}}
	DefaultPod(pod)
	if *pod.Spec.Volumes[2].AzureDisk.Kind != corev1.AzureSharedBlobDisk || pod.Spec.Volumes[3].RBD.RBDPool != "rbd" ||
		pod.Spec.Volumes[4].ISCSI.ISCSIInterface != "default" || pod.Spec.Volumes[5].ScaleIO.FSType != "xfs" {
		t.Errorf("legacy volume defaults not applied: %+v", pod.Spec.Volumes)
	}
}
