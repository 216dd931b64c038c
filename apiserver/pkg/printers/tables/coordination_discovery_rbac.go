package tables

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	discoveryv1beta1 "k8s.io/api/discovery/v1beta1"
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1beta1 "k8s.io/api/rbac/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func bindingColumns(roleRefDescription, kind string) []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Role", Type: "string", Description: roleRefDescription},
		ageColumn(),
		{Name: "Users", Type: "string", Priority: 1, Description: "Users in the " + kind},
		{Name: "Groups", Type: "string", Priority: 1, Description: "Groups in the " + kind},
		{Name: "ServiceAccounts", Type: "string", Priority: 1, Description: "ServiceAccounts in the " + kind},
	}
}

func (p *printer) printLease(obj *coordinationv1.Lease) metav1.TableRow {
	var holderIdentity string
	if obj.Spec.HolderIdentity != nil {
		holderIdentity = *obj.Spec.HolderIdentity
	}
	return metav1.TableRow{
		Object: runtime.RawExtension{Object: obj},
		Cells:  []interface{}{obj.Name, holderIdentity, p.since(obj.CreationTimestamp)},
	}
}

func (p *printer) printEndpointSlice(obj *discoveryv1.EndpointSlice) metav1.TableRow {
	return metav1.TableRow{
		Object: runtime.RawExtension{Object: obj},
		Cells: []interface{}{
			obj.Name,
			string(obj.AddressType),
			formatDiscoveryPorts(obj.Ports),
			formatDiscoveryEndpoints(obj.Endpoints),
			p.since(obj.CreationTimestamp),
		},
	}
}

// formatDiscoveryPorts prints up to three port numbers (or names, or "*").
func formatDiscoveryPorts(ports []discoveryv1.EndpointPort) string {
	const max = 3
	list := []string{}
	more := false
	count := 0
	for _, port := range ports {
		if len(list) < max {
			portNum := "*"
			if port.Port != nil {
				portNum = strconv.Itoa(int(*port.Port))
			} else if port.Name != nil {
				portNum = *port.Name
			}
			list = append(list, portNum)
		} else if len(list) == max {
			more = true
		}
		count++
	}
	return listWithMore(list, more, count, max)
}

// formatDiscoveryEndpoints prints up to three endpoint addresses.
func formatDiscoveryEndpoints(endpoints []discoveryv1.Endpoint) string {
	const max = 3
	list := []string{}
	more := false
	count := 0
	for _, endpoint := range endpoints {
		for _, address := range endpoint.Addresses {
			if len(list) < max {
				list = append(list, address)
			} else if len(list) == max {
				more = true
			}
			count++
		}
	}
	return listWithMore(list, more, count, max)
}

func (p *printer) printRoleBinding(obj *rbacv1.RoleBinding) metav1.TableRow {
	return p.bindingRow(obj, obj.Name, obj.RoleRef, obj.Subjects, obj.CreationTimestamp)
}

func (p *printer) printClusterRoleBinding(obj *rbacv1.ClusterRoleBinding) metav1.TableRow {
	return p.bindingRow(obj, obj.Name, obj.RoleRef, obj.Subjects, obj.CreationTimestamp)
}

func (p *printer) bindingRow(obj runtime.Object, name string, roleRef rbacv1.RoleRef, subjects []rbacv1.Subject, created metav1.Time) metav1.TableRow {
	users, groups, sas := subjectsStrings(subjects)
	return metav1.TableRow{
		Object: runtime.RawExtension{Object: obj},
		Cells: []interface{}{
			name,
			fmt.Sprintf("%s/%s", roleRef.Kind, roleRef.Name),
			p.since(created),
			strings.Join(users, ", "),
			strings.Join(groups, ", "),
			strings.Join(sas, ", "),
		},
	}
}

// subjectsStrings splits binding subjects into users, groups and service
// accounts (as namespace/name); other kinds are not shown.
func subjectsStrings(subjects []rbacv1.Subject) (users, groups, serviceAccounts []string) {
	for _, subject := range subjects {
		switch subject.Kind {
		case rbacv1.ServiceAccountKind:
			serviceAccounts = append(serviceAccounts, fmt.Sprintf("%s/%s", subject.Namespace, subject.Name))
		case rbacv1.UserKind:
			users = append(users, subject.Name)
		case rbacv1.GroupKind:
			groups = append(groups, subject.Name)
		}
	}
	return users, groups, serviceAccounts
}

// Lease prints coordinationv1.Lease objects and lists.
var Lease = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Holder", Type: "string", Description: coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]},
		ageColumn(),
	}, p.printLease, func(l *coordinationv1.LeaseList) []coordinationv1.Lease { return l.Items })
}}

// EndpointSlice prints discoveryv1.EndpointSlice objects and lists.
var EndpointSlice = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers([]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "AddressType", Type: "string", Description: discoveryv1beta1.EndpointSlice{}.SwaggerDoc()["addressType"]},
		{Name: "Ports", Type: "string", Description: discoveryv1beta1.EndpointSlice{}.SwaggerDoc()["ports"]},
		{Name: "Endpoints", Type: "string", Description: discoveryv1beta1.EndpointSlice{}.SwaggerDoc()["endpoints"]},
		ageColumn(),
	}, p.printEndpointSlice, func(l *discoveryv1.EndpointSliceList) []discoveryv1.EndpointSlice { return l.Items })
}}

// RoleBinding prints rbacv1.RoleBinding objects and lists.
var RoleBinding = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers(bindingColumns(rbacv1beta1.RoleBinding{}.SwaggerDoc()["roleRef"], "roleBinding"),
		p.printRoleBinding, func(l *rbacv1.RoleBindingList) []rbacv1.RoleBinding { return l.Items })
}}

// ClusterRoleBinding prints rbacv1.ClusterRoleBinding objects and lists.
var ClusterRoleBinding = &Kind{build: func(p *printer) map[reflect.Type]Handler {
	return handlers(bindingColumns(rbacv1beta1.ClusterRoleBinding{}.SwaggerDoc()["roleRef"], "clusterRoleBinding"),
		p.printClusterRoleBinding, func(l *rbacv1.ClusterRoleBindingList) []rbacv1.ClusterRoleBinding { return l.Items })
}}
