package trace

import (
	"context"
	"fmt"
	slices2 "slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Collect reads through the API what Build needs for the pods that ref
// names: pod/NAME, rs/NAME (replicaset) or deployment/NAME (deploy); the
// pods of a ReplicaSet or Deployment come sorted by creation.
func Collect(ctx context.Context, cs kubernetes.Interface, ns, ref string) ([]Input, error) {
	kind, name, ok := strings.Cut(ref, "/")
	if !ok || name == "" || kind == "" {
		return nil, fmt.Errorf("%q: name a pod, ReplicaSet or Deployment as TYPE/NAME, e.g. pod/web-1, rs/web-7d4b9, deployment/web", ref)
	}
	var pods []corev1.Pod
	var events []corev1.Event
	seen := map[string]bool{}
	list := func(sel fields.Set) error {
		opts := metav1.ListOptions{}
		if sel != nil {
			opts.FieldSelector = sel.AsSelector().String()
		}
		l, err := cs.CoreV1().Events(ns).List(ctx, opts)
		if err != nil {
			return err
		}
		for _, e := range l.Items {
			if !seen[e.Namespace+"/"+e.Name] {
				seen[e.Namespace+"/"+e.Name] = true
				events = append(events, e)
			}
		}
		return nil
	}
	switch strings.ToLower(kind) {
	case "pod", "pods", "po":
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		pods = []corev1.Pod{*p}
		if err := list(fields.Set{"involvedObject.kind": "Pod", "involvedObject.name": name}); err != nil {
			return nil, err
		}
		if o := metav1.GetControllerOf(p); o != nil {
			if err := list(fields.Set{"involvedObject.kind": o.Kind, "involvedObject.name": o.Name}); err != nil {
				return nil, err
			}
		}
	case "replicaset", "replicasets", "rs", "deployment", "deployments", "deploy":
		var owners []types.UID
		if k := strings.ToLower(kind); strings.HasPrefix(k, "deploy") {
			d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			rss, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, err
			}
			for _, rs := range rss.Items {
				if o := metav1.GetControllerOf(&rs); o != nil && o.UID == d.UID {
					owners = append(owners, rs.UID)
				}
			}
		} else {
			rs, err := cs.AppsV1().ReplicaSets(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			owners = []types.UID{rs.UID}
		}
		all, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, p := range all.Items {
			if o := metav1.GetControllerOf(&p); o != nil && containsUID(owners, o.UID) {
				pods = append(pods, p)
			}
		}
		sort.SliceStable(pods, func(i, j int) bool {
			return pods[i].CreationTimestamp.Before(&pods[j].CreationTimestamp) ||
				pods[i].CreationTimestamp.Equal(&pods[j].CreationTimestamp) && pods[i].Name < pods[j].Name
		})
		if err := list(nil); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%q: skiffctl trace follows pods, ReplicaSets (rs) and Deployments, not %q", ref, kind)
	}
	slices, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	// The events of the pods' Services (the proxies' RulesWritten); a
	// ReplicaSet's or Deployment's listing has them already.
	svcsOf := map[types.UID][]string{}
	listed := map[string]bool{}
	for i := range pods {
		svcsOf[pods[i].UID] = servicesListing(slices.Items, pods[i].UID)
		for _, svc := range svcsOf[pods[i].UID] {
			if k := strings.ToLower(kind); (k == "pod" || k == "pods" || k == "po") && !listed[svc] {
				listed[svc] = true
				if err := list(fields.Set{"involvedObject.kind": "Service", "involvedObject.name": svc}); err != nil {
					return nil, err
				}
			}
		}
	}
	owners := map[types.UID]*metav1.ObjectMeta{}
	var out []Input
	for i := range pods {
		p := &pods[i]
		in := Input{Pod: p, Events: eventsOf(events, "Pod", p.Name, p.UID), Slices: slices.Items}
		for _, svc := range svcsOf[p.UID] {
			in.ServiceEvents = append(in.ServiceEvents, eventsOf(events, "Service", svc, "")...)
		}
		if o := metav1.GetControllerOf(p); o != nil {
			in.OwnerKind, in.OwnerName = o.Kind, o.Name
			m, seen := owners[o.UID]
			if !seen && o.Kind == "ReplicaSet" {
				if rs, err := cs.AppsV1().ReplicaSets(ns).Get(ctx, o.Name, metav1.GetOptions{}); err == nil && rs.UID == o.UID {
					m = &rs.ObjectMeta
				}
				owners[o.UID] = m
			}
			if m != nil {
				in.OwnerCreated = m.CreationTimestamp.Time
				// The ReplicaSet's Deployment, stored before it.
				if d := metav1.GetControllerOf(m); d != nil && d.Kind == "Deployment" {
					dm, seen := owners[d.UID]
					if !seen {
						if dep, err := cs.AppsV1().Deployments(ns).Get(ctx, d.Name, metav1.GetOptions{}); err == nil && dep.UID == d.UID {
							dm = &dep.ObjectMeta
						}
						owners[d.UID] = dm
					}
					if dm != nil {
						in.Deployment, in.DeploymentCreated = d.Name, dm.CreationTimestamp.Time
					}
				}
			}
			in.OwnerEvents = eventsOf(events, o.Kind, o.Name, o.UID)
		}
		out = append(out, in)
	}
	return out, nil
}

// EventsOf lists a pod's events through the API.
func EventsOf(ctx context.Context, cs kubernetes.Interface, p *corev1.Pod) ([]corev1.Event, error) {
	l, err := cs.CoreV1().Events(p.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.Set{"involvedObject.kind": "Pod", "involvedObject.name": p.Name}.AsSelector().String()})
	if err != nil {
		return nil, err
	}
	return eventsOf(l.Items, "Pod", p.Name, p.UID), nil
}

// servicesListing names the Services whose EndpointSlices list the pod.
func servicesListing(slices []discoveryv1.EndpointSlice, uid types.UID) []string {
	var out []string
	for _, s := range slices {
		svc := s.Labels[discoveryv1.LabelServiceName]
		if svc == "" || slices2.Contains(out, svc) {
			continue
		}
		for _, ep := range s.Endpoints {
			if ep.TargetRef != nil && ep.TargetRef.UID == uid {
				out = append(out, svc)
				break
			}
		}
	}
	return out
}

// eventsOf keeps the events about this object (this UID: not an earlier
// object of the same name; uid "": any).
func eventsOf(evs []corev1.Event, kind, name string, uid types.UID) []corev1.Event {
	var out []corev1.Event
	for _, e := range evs {
		o := e.InvolvedObject
		if o.Kind == kind && o.Name == name && (o.UID == "" || uid == "" || o.UID == uid) {
			out = append(out, e)
		}
	}
	return out
}

func containsUID(l []types.UID, u types.UID) bool {
	for _, x := range l {
		if x == u {
			return true
		}
	}
	return false
}
